/*
 * screen_steps: Algorithm 1 one step at a time, as a teaching screen.
 *
 * Positions: 0 is the graph as loaded; 1..N are the N steps (what was
 * removed, merged or folded, why Eq. 2 or Eq. 3 applies, or why a fold
 * does, and the new edge's cost table summarised row by row); N + 1 is the
 * final enumeration of the nodes left; N + 1 + j is the undo having
 * assigned j removed layers their argmin configs. The right half draws the
 * graph that remains.
 */
#include "draw.h"
#include "find.h"
#include "graph_draw.h"
#include "list.h"
#include "screens.h"
#include "export_dot.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int n_positions(const app *a)
{
    const search_result *r = plan_search_result(a->p);
    return r->n_steps + 2 + r->n_undo;
}

/* The reduced graph after gs steps. */
static void ensure_graph(app *a, int gs)
{
    if (steps_of(a)->sv_step == gs && steps_of(a)->sv.valid) return;
    const search_result *r = plan_search_result(a->p);
    int nn = r->n_nodes, ne = r->n_edges_original + r->n_steps;
    unsigned char *an = lw_calloc((size_t)nn + 1, 1), *ae = lw_calloc((size_t)ne + 1, 1);
    search_state_at(r, gs, an, ae);
    int *ids = lw_malloc(sizeof(int) * (size_t)(nn + 1)), *pos = lw_malloc(sizeof(int) * (size_t)(nn + 1));
    int n = 0;
    for (int v = 0; v < nn; v++) {
        pos[v] = -1;
        if (an[v]) {
            pos[v] = n;
            ids[n++] = v;
        }
    }
    int *from = lw_malloc(sizeof(int) * (size_t)(ne + 1)), *to = lw_malloc(sizeof(int) * (size_t)(ne + 1));
    int m = 0;
    for (int e = 0; e < ne; e++) {
        if (!ae[e]) continue;
        int f, t;
        search_edge_ends(plan_graph(a->p), r, e, &f, &t, NULL);
        if (pos[f] < 0 || pos[t] < 0) continue;
        from[m] = pos[f];
        to[m] = pos[t];
        m++;
    }
    graph_view_build(&steps_of(a)->sv, a->p, n, ids, m, from, to);
    steps_of(a)->sv_step = gs;
    free(an);
    free(ae);
    free(ids);
    free(pos);
    free(from);
    free(to);
}

static const char *cfg_name(const app *a, int li, int k, char *buf, size_t n)
{
    plan_format_config(a->p, li, plan_config(a->p, li, k), buf, n);
    return buf;
}

static const char *lname(const app *a, int li) { return plan_net(a->p)->layers[li].name; }

/* ---- graph labels and styles per page ------------------------------------ */

static int undo_assigned(const app *a, int li)
{
    const search_result *r = plan_search_result(a->p);
    int j = steps_of(a)->step - (r->n_steps + 1);
    for (int i = 0; i < r->n_left; i++)
        if (r->left[i] == li) return 1;
    for (int i = 0; i < j && i < r->n_undo; i++)
        if (r->undo_node[i] == li) return 1;
    return 0;
}

static const char *label_step(const app *a, int id, char *buf, size_t n)
{
    const search_result *r = plan_search_result(a->p);
    if (steps_of(a)->step > r->n_steps) {
        if (undo_assigned(a, id)) return cfg_name(a, id, r->config[id], buf, n);
        snprintf(buf, n, "?");
        return buf;
    }
    snprintf(buf, n, "%d cfg", plan_n_configs(a->p, id));
    return buf;
}

static int style_step(const app *a, int id)
{
    const search_result *r = plan_search_result(a->p);
    int k = steps_of(a)->step;
    if (k > r->n_steps) {
        int j = k - (r->n_steps + 1);
        if (j >= 1 && j <= r->n_undo && r->undo_node[j - 1] == id) return ST_NODE_HI;
        if (!undo_assigned(a, id)) return ST_DIM;
        return ST_CLASS0 + config_class(plan_config(a->p, id, r->config[id]));
    }
    if (k < r->n_steps) {
        const elim_step *nx = &r->steps[k];
        if (nx->kind != ELIM_EDGE && nx->node == id) return ST_NEXT; /* what "Next: ... (reversed)" names */
        /* the next edge elimination's two ends (issue 36, bug 6: it marked nothing) */
        if (nx->kind == ELIM_EDGE && (id == nx->from || id == nx->to)) return ST_NEXT;
    }
    if (k >= 1) {
        const elim_step *s = &r->steps[k - 1];
        if (id == s->from || id == s->to) return ST_NODE_HI;
    }
    return ST_NORMAL;
}

/* ---- the text panel ----------------------------------------------------- */

typedef struct panel {
    WINDOW *w;
    rect r;
    int y;  /* next free row */
} panel;

static void para(panel *pn, int st, const char *fmt, ...) LW_PRINTF(3, 4);
static void para(panel *pn, int st, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (pn->y >= pn->r.y + pn->r.h) return;
    rect rr = {pn->y, pn->r.x, pn->r.y + pn->r.h - pn->y, pn->r.w};
    pn->y += ui_wrap(pn->w, rr, st, buf);
}

static void next_line(app *a, panel *pn)
{
    const search_result *r = plan_search_result(a->p);
    int k = steps_of(a)->step;
    if (k < r->n_steps) {
        const elim_step *nx = &r->steps[k];
        if (nx->kind == ELIM_NODE)
            para(pn, ST_DIM, "Next: node elimination of %s (reversed).", lname(a, nx->node));
        else if (nx->kind == ELIM_FOLD)
            para(pn, ST_DIM, "Next: fold of %s into %s (reversed).", lname(a, nx->node), lname(a, nx->into));
        else
            para(pn, ST_DIM, "Next: edge elimination of e%d and e%d (%s %s %s, reversed).", nx->e1, nx->e2, lname(a, nx->from),
                 G->arrow_right, lname(a, nx->to));
    } else if (k == r->n_steps) {
        para(pn, ST_DIM, "Next: the final step over the %d node%s left.", r->n_left, r->n_left == 1 ? "" : "s");
    }
}

/* The removed node's best config for entry (i, k) of step s's new table;
 * -1 for an edge elimination (nothing removed). */
static int via_config(const app *a, const elim_step *s, int i, int k)
{
    if (s->kind == ELIM_NODE) return s->argmin[i * plan_n_configs(a->p, s->to) + k];
    if (s->kind == ELIM_FOLD) return s->argmin[s->into == s->from ? i : k];
    return -1;
}

/* Summary of the new edge's table: size, best entry, min/argmin per row. */
static void table_summary(app *a, panel *pn, const elim_step *s)
{
    int nf = plan_n_configs(a->p, s->from), nt = plan_n_configs(a->p, s->to);
    double best = INFINITY;
    int bi = 0, bk = 0;
    for (int i = 0; i < nf; i++)
        for (int k = 0; k < nt; k++)
            if (s->table[i * nt + k] < best) {
                best = s->table[i * nt + k];
                bi = i;
                bk = k;
            }
    char c1[64], c2[64], c3[64], tb[32];
    para(pn, ST_NORMAL, "Table e%d: %d %s %d = %d entries (configs of %s %s configs of %s).", s->new_edge, nf, G->times,
         nt, nf * nt, lname(a, s->from), G->times, lname(a, s->to));
    int via = s->kind != ELIM_EDGE;
    if (via)
        para(pn, ST_GOOD, "Best entry %s: %s = %s, %s = %s, via %s = %s.", fmt_ms(best, tb, sizeof tb),
             lname(a, s->from), cfg_name(a, s->from, bi, c1, sizeof c1), lname(a, s->to),
             cfg_name(a, s->to, bk, c2, sizeof c2), lname(a, s->node),
             cfg_name(a, s->node, via_config(a, s, bi, bk), c3, sizeof c3));
    else
        para(pn, ST_GOOD, "Best entry %s: %s = %s, %s = %s.", fmt_ms(best, tb, sizeof tb), lname(a, s->from),
             cfg_name(a, s->from, bi, c1, sizeof c1), lname(a, s->to), cfg_name(a, s->to, bk, c2, sizeof c2));
    /* what an entry holds: the two ends' own costs stay in their nodes */
    if (via)
        para(pn, ST_DIM, "An entry holds the t_x of the edges it replaces and %s's t_c + t_s; %s's and %s's own t_c "
                         "+ t_s are not in it (they stay in their nodes).",
             lname(a, s->node), lname(a, s->from), lname(a, s->to));
    else
        para(pn, ST_DIM, "An entry holds the t_x of the two edges it replaces; %s's and %s's own t_c + t_s are not "
                         "in it (they stay in their nodes).",
             lname(a, s->from), lname(a, s->to));
    if (pn->y >= pn->r.y + pn->r.h - 1) return;
    /* one row per config of the producer: its cheapest consumer config */
    int cw = (pn->r.w - 12) / (via ? 3 : 2);
    if (cw > 16) cw = 16;
    int x;
    char h[96], h1[64];
    ui_fill(pn->w, pn->y, pn->r.x, pn->r.w, ST_HEADER);
    x = pn->r.x;
    ui_put(pn->w, pn->y, x, cw, ST_HEADER, ui_fit(lname(a, s->from), cw, h1, sizeof h1));
    x += cw + 1;
    ui_put_right(pn->w, pn->y, x, 9, ST_HEADER, "min ms");
    x += 10;
    snprintf(h, sizeof h, "best %s", lname(a, s->to));
    ui_put(pn->w, pn->y, x, cw, ST_HEADER, ui_fit(h, cw, h1, sizeof h1));
    x += cw + 1;
    if (via) {
        snprintf(h, sizeof h, "via %s", lname(a, s->node));
        ui_put(pn->w, pn->y, x, pn->r.x + pn->r.w - x, ST_HEADER, ui_fit(h, pn->r.x + pn->r.w - x, h1, sizeof h1));
    }
    pn->y++;
    int rows = pn->r.y + pn->r.h - pn->y;
    if (nf > rows) rows--; /* the last row says which rows these are */
    list_fit(&steps_of(a)->rows, nf, rows, 0);
    for (int q = 0; q < rows && steps_of(a)->rows.top + q < nf; q++) {
        int i = steps_of(a)->rows.top + q;
        double mn = INFINITY;
        int mk = 0;
        for (int k = 0; k < nt; k++)
            if (s->table[i * nt + k] < mn) {
                mn = s->table[i * nt + k];
                mk = k;
            }
        int st = i == bi ? ST_GOOD : ST_NORMAL;
        int y = pn->y++;
        x = pn->r.x;
        ui_put(pn->w, y, x, cw, st, cfg_name(a, s->from, i, c1, sizeof c1));
        x += cw + 1;
        char v[32];
        if (isfinite(mn)) snprintf(v, sizeof v, "%.2f", mn);
        else snprintf(v, sizeof v, "inf");
        ui_put_right(pn->w, y, x, 9, st, v);
        x += 10;
        ui_put(pn->w, y, x, cw, st, cfg_name(a, s->to, mk, c2, sizeof c2));
        x += cw + 1;
        if (via)
            ui_put(pn->w, y, x, pn->r.x + pn->r.w - x, st, cfg_name(a, s->node, via_config(a, s, i, mk), c3, sizeof c3));
    }
    if (nf > rows && rows > 0) {
        char more[64];
        snprintf(more, sizeof more, "rows %d-%d of %d (PgUp/PgDn)", steps_of(a)->rows.top + 1,
                 steps_of(a)->rows.top + rows < nf ? steps_of(a)->rows.top + rows : nf, nf);
        ui_put(pn->w, pn->y, pn->r.x, pn->r.w, ST_DIM, more);
    }
}

static void text_start(app *a, panel *pn)
{
    const search_result *r = plan_search_result(a->p);
    int ne = r->n_edges_original, nn = 0, nf = 0;
    for (int s = 0; s < r->n_steps; s++) {
        nn += r->steps[s].kind == ELIM_NODE;
        nf += r->steps[s].kind == ELIM_FOLD;
    }
    para(pn, ST_BOLD, "Algorithm 1 %s the graph as loaded", G->dot);
    para(pn, ST_NORMAL,
         "%d nodes (layers) and %d edges (tensors). A node costs t_c + t_s for each of its configs; an edge costs "
         "t_x for each pair of configs of its ends. Algorithm 1 applies node eliminations (Eq. 2) and edge "
         "eliminations (Eq. 3) until neither applies, enumerates the few nodes left, then undoes the eliminations "
         "to give every layer its config.",
         r->n_nodes, ne);
    if (r->fold)
        para(pn, ST_NORMAL,
             "This search also folds a layer with a single edge into its neighbour (k^2 work, where a node "
             "elimination is k^3; not in the paper: A, or search --no-fold, leaves it out). %d steps here: %d "
             "fold%s, %d node and %d edge eliminations.",
             r->n_steps, nf, nf == 1 ? "" : "s", nn, r->n_steps - nn - nf);
    else
        para(pn, ST_NORMAL, "Algorithm 1 only, as in the paper: no folds (A turns them on). %d steps here: %d node "
                            "and %d edge eliminations.",
             r->n_steps, nn, r->n_steps - nn);
    pn->y++;
    next_line(a, pn);
}

static void text_elimination(app *a, panel *pn)
{
    const search_result *r = plan_search_result(a->p);
    const elim_step *s = &r->steps[steps_of(a)->step - 1];
    if (s->kind == ELIM_FOLD) {
        int cu = plan_n_configs(a->p, s->into), cj = plan_n_configs(a->p, s->node);
        int other = s->from == s->into ? s->to : s->from;
        para(pn, ST_BOLD, "Step %d/%d %s fold (not in the paper)", steps_of(a)->step, r->n_steps, G->dot);
        para(pn, ST_NORMAL,
             "%s has a single edge, e%d, to %s: its cheapest config for each config of %s (t_c + t_s + t_x of "
             "e%d) is added to %s's edge e%d (with %s), which becomes e%d. %d %s %d sums, not k^3.",
             lname(a, s->node), s->e1, lname(a, s->into), lname(a, s->into), s->e1, lname(a, s->into), s->e2,
             lname(a, other), s->new_edge, cu, G->times, cj);
    } else if (s->kind == ELIM_NODE) {
        para(pn, ST_BOLD, "Step %d/%d %s node elimination (Eq. 2)", steps_of(a)->step, r->n_steps, G->dot);
        para(pn, ST_NORMAL,
             "%s has one in-edge e%d (from %s) and one out-edge e%d (to %s), so it goes: the new edge e%d %s %s %s "
             "gets, for each config pair of its ends, the cheapest config of %s: t_c + t_s of %s plus t_x of both "
             "edges, minimised over its %d configs.",
             lname(a, s->node), s->e1, lname(a, s->from), s->e2, lname(a, s->to), s->new_edge, lname(a, s->from),
             G->arrow_right, lname(a, s->to), lname(a, s->node), lname(a, s->node),
             plan_n_configs(a->p, s->node));
    } else {
        para(pn, ST_BOLD, "Step %d/%d %s edge elimination (Eq. 3)", steps_of(a)->step, r->n_steps, G->dot);
        para(pn, ST_NORMAL,
             "Edges e%d and e%d both join %s %s %s, so they merge: the new edge e%d's table is the sum of their "
             "tables, entry by entry.",
             s->e1, s->e2, lname(a, s->from), G->arrow_right, lname(a, s->to), s->new_edge);
    }
    next_line(a, pn);
    table_summary(a, pn, s);
}

static void text_final(app *a, panel *pn)
{
    const search_result *r = plan_search_result(a->p);
    char names[512] = "", c1[64];
    size_t k = 0;
    for (int i = 0; i < r->n_left && k + 1 < sizeof names; i++) {
        int w = snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "", lname(a, r->left[i]));
        if (w < 0) break;
        k += (size_t)w;
    }
    para(pn, ST_BOLD, "Final step %s %s", G->dot, r->method == FINAL_ENUMERATION ? "enumeration" : "variable elimination");
    /* two nodes joined by one edge: each has a single edge, but the folds
     * stop there as the eliminations do (issue 36, bug 11: "no node has a
     * single edge to fold" read false) */
    int pair = r->n_left == 2 && r->n_edges_left == 1;
    para(pn, ST_NORMAL,
         "%s: %d node%s left (%s). "
         "%s %.0f combination%s of their configs, each costed with their node tables and the tables of the %d "
         "edge%s left.",
         pair ? "Two nodes joined by one edge, where the eliminations and folds stop"
         : r->fold ? "No node has exactly one in- and one out-edge or a single edge to fold, and no two edges join the "
                     "same ends"
                   : "No node has exactly one in- and one out-edge and no two edges join the same ends",
         r->n_left, r->n_left == 1 ? " is" : "s are", names,
         r->method == FINAL_ENUMERATION ? "Algorithm 1 enumerates all" : "Too many to enumerate, so exact variable "
                                                                       "elimination searches the",
         r->final_space, r->final_space == 1 ? "" : "s", r->n_edges_left, r->n_edges_left == 1 ? "" : "s");
    for (int i = 0; i < r->n_left; i++)
        para(pn, ST_GOOD, "  %s = %s (%d configs)", lname(a, r->left[i]), cfg_name(a, r->left[i], r->config[r->left[i]], c1, sizeof c1),
             plan_n_configs(a->p, r->left[i]));
    char tb[32];
    if (r->fold)
        para(pn, ST_NORMAL,
             "Best total: %s. Next: undo the %d node eliminations and folds in reverse, each node taking its argmin "
             "config given its neighbours (two, or the one it was folded into).",
             fmt_ms(r->cost, tb, sizeof tb), r->n_undo);
    else
        para(pn, ST_NORMAL,
             "Best total: %s. Next: undo the %d node eliminations in reverse, each node taking its argmin config "
             "given its two neighbours.",
             fmt_ms(r->cost, tb, sizeof tb), r->n_undo);
}

static void text_undo(app *a, panel *pn)
{
    const search_result *r = plan_search_result(a->p);
    int j = steps_of(a)->step - (r->n_steps + 1);
    int v = r->undo_node[j - 1];
    int si = -1;
    for (int s = 0; s < r->n_steps; s++)
        if (r->steps[s].kind != ELIM_EDGE && r->steps[s].node == v) si = s;
    char c1[64], c2[64], c3[64];
    para(pn, ST_BOLD, "Undo %d/%d %s %s = %s", j, r->n_undo, G->dot, lname(a, v), cfg_name(a, v, r->config[v], c1, sizeof c1));
    if (si >= 0 && r->steps[si].kind == ELIM_FOLD) {
        const elim_step *s = &r->steps[si];
        int u = s->into;
        para(pn, ST_NORMAL,
             "%s was folded into %s in step %d. %s now has its config (%s), so %s takes the config that was its "
             "cheapest for it: %s.",
             lname(a, v), lname(a, u), si + 1, lname(a, u), cfg_name(a, u, r->config[u], c2, sizeof c2), lname(a, v),
             cfg_name(a, v, s->argmin[r->config[u]], c1, sizeof c1));
    } else if (si >= 0) {
        const elim_step *s = &r->steps[si];
        int nt = plan_n_configs(a->p, s->to);
        int arg = s->argmin[r->config[s->from] * nt + r->config[s->to]];
        para(pn, ST_NORMAL,
             "%s was removed in step %d between %s and %s. Both now have configs (%s = %s, %s = %s), so %s takes "
             "the config that minimised Eq. 2 for that pair: %s.",
             lname(a, v), si + 1, lname(a, s->from), lname(a, s->to), lname(a, s->from),
             cfg_name(a, s->from, r->config[s->from], c2, sizeof c2), lname(a, s->to),
             cfg_name(a, s->to, r->config[s->to], c3, sizeof c3), lname(a, v), cfg_name(a, v, arg, c1, sizeof c1));
    }
    if (j == r->n_undo) {
        char tb[32];
        para(pn, ST_GOOD, "Every layer has its config: the optimal strategy, %s per step (table: 1).",
             fmt_ms(r->cost, tb, sizeof tb));
    }
    pn->y++;
    para(pn, ST_DIM, "Assigned so far, latest first:");
    for (int i = j - 1; i >= 0 && pn->y < pn->r.y + pn->r.h; i--) {
        int u = r->undo_node[i];
        para(pn, i == j - 1 ? ST_NODE_HI : ST_NORMAL, "  %s = %s", lname(a, u), cfg_name(a, u, r->config[u], c1, sizeof c1));
    }
}

static void draw_steps(app *a, WINDOW *w, rect r)
{
    lw_error err = {0};
    /* the plan's search kept no tables: searched again keeping them (the
     * same steps), which its result takes */
    if (plan_step_tables(a->p, &err) != 0) {
        mvwprintw(w, r.y, r.x, "the steps need the search's tables: %s", err.msg);
        return;
    }
    const search_result *sr = plan_search_result(a->p);
    int last = n_positions(a) - 1;
    if (steps_of(a)->step > last) steps_of(a)->step = last;
    if (steps_of(a)->step < 0) steps_of(a)->step = 0;
    int gs = steps_of(a)->step <= sr->n_steps ? steps_of(a)->step : steps_of(a)->step == sr->n_steps + 1 ? sr->n_steps : 0;
    ensure_graph(a, gs);

    int tw = r.w >= 120 ? 60 : r.w / 2 + 4;
    /* header: where we are */
    const char *phase = steps_of(a)->step == 0 ? "start" : steps_of(a)->step <= sr->n_steps ? "eliminations" : steps_of(a)->step == sr->n_steps + 1 ? "final step" : "undo";
    char head[96];
    snprintf(head, sizeof head, " position %d/%d %s %s ", steps_of(a)->step, last, G->dot, phase);
    int hw = ui_width(head) < 34 ? 34 : ui_width(head);
    ui_fill(w, r.y, r.x, hw, ST_HEADER);
    ui_put(w, r.y, r.x, hw, ST_HEADER, head);
    /* a progress bar of the walk through the algorithm */
    if (r.w - hw - 2 > 10) ui_progress(w, r.y, r.x + hw + 1, r.w - hw - 2, last > 0 ? (double)steps_of(a)->step / last : 1);

    panel pn = {w, {r.y + 1, r.x, r.h - 1, tw}, r.y + 1};
    if (steps_of(a)->step == 0) text_start(a, &pn);
    else if (steps_of(a)->step <= sr->n_steps) text_elimination(a, &pn);
    else if (steps_of(a)->step == sr->n_steps + 1) text_final(a, &pn);
    else text_undo(a, &pn);

    /* the graph that remains */
    rect gr = {r.y + 1, r.x + tw + 1, r.h - 1, r.w - tw - 1};
    for (int y = gr.y; y < gr.y + gr.h; y++) ui_put(w, y, gr.x - 1, 1, ST_DIM, G->box[LINE_UP | LINE_DOWN]);
    int nodes = steps_of(a)->sv.n_ids, edges = steps_of(a)->sv.lay ? steps_of(a)->sv.lay->n_segs : 0;
    (void)edges;
    ui_putf(w, gr.y, gr.x + 1, gr.w - 1, ST_DIM, "%s: %d node%s",
            steps_of(a)->step > sr->n_steps + 1 ? "the undo over the graph" : "graph left", nodes, nodes == 1 ? "" : "s");
    rect view = {gr.y + 1, gr.x + 1, gr.h - 1, gr.w - 1};
    graph_paint gp = {label_step, style_step, -1, -1};
    if (steps_of(a)->step >= 1 && steps_of(a)->step <= sr->n_steps) {
        gp.hi_from = sr->steps[steps_of(a)->step - 1].from;
        gp.hi_to = sr->steps[steps_of(a)->step - 1].to;
    }
    /* keep the step's action in view: the next node (reversed), or the next
     * edge elimination's end, else the last step's new edge (issue 36, bug
     * 6: the reversed box of the next node went off screen) */
    int focus = -1, k = steps_of(a)->step;
    if (k < sr->n_steps) focus = sr->steps[k].kind != ELIM_EDGE ? sr->steps[k].node : sr->steps[k].to;
    else if (k >= 1 && k <= sr->n_steps) focus = sr->steps[k - 1].to;
    else if (k > sr->n_steps + 1) focus = sr->undo_node[k - sr->n_steps - 2];
    int fy, fx, fw;
    if (steps_of(a)->follow && focus >= 0 && graph_view_find(&steps_of(a)->sv, focus, &fy, &fx, &fw) == 0) {
        if (fy < steps_of(a)->pan_y || fy + 3 > steps_of(a)->pan_y + view.h) steps_of(a)->pan_y = fy - view.h / 2;
        if (fx < steps_of(a)->pan_x || fx + fw > steps_of(a)->pan_x + view.w) steps_of(a)->pan_x = fx + fw / 2 - view.w / 2;
    }
    if (steps_of(a)->pan_y > steps_of(a)->sv.height - view.h) steps_of(a)->pan_y = steps_of(a)->sv.height - view.h;
    if (steps_of(a)->pan_y < 0) steps_of(a)->pan_y = 0;
    if (steps_of(a)->pan_x > steps_of(a)->sv.width - view.w) steps_of(a)->pan_x = steps_of(a)->sv.width - view.w;
    if (steps_of(a)->pan_x < 0) steps_of(a)->pan_x = 0;
    int px = steps_of(a)->sv.width < view.w ? -(view.w - steps_of(a)->sv.width) / 2 : steps_of(a)->pan_x;
    graph_view_draw(a, &steps_of(a)->sv, &gp, w, view, steps_of(a)->pan_y, px);
}

/* ---- keys ------------------------------------------------------------- */

static action go(app *a, int key)
{
    int last = n_positions(a) - 1;
    switch (key) {
    case KEY_RIGHT:
    case ' ': steps_of(a)->step++; break;
    case KEY_LEFT: steps_of(a)->step--; break;
    case KEY_HOME: steps_of(a)->step = 0; break;
    case KEY_END: steps_of(a)->step = last; break;
    default: break;
    }
    if (steps_of(a)->step < 0) steps_of(a)->step = 0;
    if (steps_of(a)->step > last) steps_of(a)->step = last;
    steps_of(a)->rows.top = 0;
    steps_of(a)->follow = 1;
    return ACT_REDRAW;
}

static action jump_phase(app *a, int key)
{
    const search_result *r = plan_search_result(a->p);
    /* f: the final step; u: the end of the undo */
    steps_of(a)->step = key == 'f' ? r->n_steps + 1 : n_positions(a) - 1;
    steps_of(a)->rows.top = 0;
    steps_of(a)->follow = 1;
    return ACT_REDRAW;
}

static action pan(app *a, int key)
{
    steps_of(a)->follow = 0;
    switch (key) {
    case KEY_UP:
    case 'k': steps_of(a)->pan_y -= 3; break;
    case KEY_DOWN:
    case 'j': steps_of(a)->pan_y += 3; break;
    case 'h': steps_of(a)->pan_x -= 8; break;
    case 'l': steps_of(a)->pan_x += 8; break;
    default: break;
    }
    return ACT_REDRAW;
}

static action rows(app *a, int key)
{
    list_key(&steps_of(a)->rows, key, 0, 0, 0);
    return ACT_REDRAW;
}

/* Search: the steps that touch a matching layer — an elimination that
 * removes it or joins it by the new edge, the final step while it is left,
 * the undo assigning it. */
static int step_matches(int pos, void *user)
{
    const app *a = user;
    const search_result *r = plan_search_result(a->p);
    if (pos >= 1 && pos <= r->n_steps) {
        const elim_step *st = &r->steps[pos - 1];
        return (st->node >= 0 && app_layer_matches(a, st->node)) || app_layer_matches(a, st->from) ||
               app_layer_matches(a, st->to);
    }
    if (pos == r->n_steps + 1) {
        for (int i = 0; i < r->n_left; i++)
            if (app_layer_matches(a, r->left[i])) return 1;
        return 0;
    }
    int j = pos - (r->n_steps + 1);
    return j >= 1 && j <= r->n_undo && app_layer_matches(a, r->undo_node[j - 1]);
}

static int find(app *a, int dir, int *nth)
{
    list_cursor c = {steps_of(a)->step, 0, 0};
    int n = list_find(&c, n_positions(a), dir, step_matches, a, nth);
    if (n) {
        steps_of(a)->step = c.sel;
        steps_of(a)->rows.top = 0;
        steps_of(a)->follow = 1;
    }
    return n;
}

static const keybind steps_keys[] = {
    {{KEY_RIGHT, ' '}, "Right Space", "next step", go},
    {{KEY_LEFT}, "Left", "previous step", go},
    {{KEY_HOME, KEY_END}, "Home End", "the start / the end of the undo", go},
    {{'f', 'u'}, "f u", "jump to the final step / the end of the undo", jump_phase},
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "pan the graph up / down", pan},
    {{'h', 'l'}, "h l", "pan the graph left / right", pan},
    {{KEY_PPAGE, KEY_NPAGE}, "PgUp PgDn", "scroll the new edge's table rows", rows},
    {{0}, NULL, NULL, NULL},
};

static void enter_steps(app *a) { steps_of(a)->follow = 1; }

static void *steps_new(app *a)
{
    (void)a;
    steps_state *ss = lw_calloc(1, sizeof *ss);
    ss->sv_step = -1;
    ss->follow = 1;
    return ss;
}

static void steps_free(app *a, void *st)
{
    (void)a;
    steps_state *ss = st;
    graph_view_free(&ss->sv);
    free(ss);
}

/* A new optimum: the reduced graph is drawn again, and the position stays
 * within the new search's steps. */
static void steps_invalidate(app *a, int settings)
{
    (void)settings;
    steps_state *ss = steps_of(a);
    ss->sv_step = -1;
    int max_step = plan_search_result(a->p) ? plan_search_result(a->p)->n_steps + 1 + plan_search_result(a->p)->n_undo : 0;
    if (ss->step > max_step) ss->step = max_step;
}

/* The export: the reduced graph at the step shown. */
static int steps_export_view(const app *a, int *step)
{
    int n = plan_search_result(a->p) ? plan_search_result(a->p)->n_steps : 0;
    *step = steps_of(a)->step < n ? steps_of(a)->step : n;
    return VIEW_REDUCED;
}

const screen_ops screen_steps_ops = {
    .tab = "Steps",
    .title = "Elimination stepper (3)",
    .hints = "Right:next Left:back /:find-layer f:final u:undo-end hjkl:pan PgUp/PgDn:rows e:export",
    .draw = draw_steps,
    .keys = steps_keys,
    .enter = enter_steps,
    .state_new = steps_new,
    .state_free = steps_free,
    .invalidate = steps_invalidate,
    .export_view = steps_export_view,
    .find = find,
    .find_what = "step",
};
