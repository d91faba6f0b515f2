/*
 * export_dot: the three diagrams of a plan, built as cgraph graphs and laid
 * out and rendered by libgvc in-process (no `dot` process).
 *
 * Every label is an HTML-like label: it gives bold names, subscripts (t_c)
 * and tables, and it spares us Graphviz's backslash escapes in layer names.
 * Colours encode a config's parallel dimensions the same way in every view,
 * so two diagrams can sit side by side in a paper.
 */
#include "export_dot.h"
#include "plan_internal.h" /* an engine module: it reads the plan's model */

#include "palette.h"

#include <gvc.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ---------- formats ---------- */

typedef struct format_info {
    const char *ext;
    const char *gv_format; /* NULL: write the graph itself with agwrite (no layout) */
} format_info;

/* cairo for the bitmaps and PDF (anti-aliased, real font metrics); Graphviz's
 * own SVG writer, whose output is plain and hand-editable. */
static const format_info formats[] = {
    {"dot", NULL}, {"gv", NULL}, {"svg", "svg"}, {"png", "png:cairo"}, {"pdf", "pdf:cairo"},
};

const char *export_formats_help(void)
{
    return ".dot, .gv, .svg, .png or .pdf";
}

const char *export_view_name(export_view v)
{
    return v == VIEW_GRAPH ? "graph" : v == VIEW_REDUCED ? "reduced" : "strategy";
}

int export_view_from_name(const char *s)
{
    if (!strcmp(s, "graph")) return VIEW_GRAPH;
    if (!strcmp(s, "reduced")) return VIEW_REDUCED;
    if (!strcmp(s, "strategy")) return VIEW_STRATEGY;
    return -1;
}

static const format_info *format_for_path(const char *file)
{
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) return NULL;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcasecmp(dot + 1, formats[i].ext) == 0) return &formats[i];
    return NULL;
}

int export_check_path(const char *file, lw_error *err)
{
    if (!file || !*file) return lw_fail(err, 2, "export: no output file given; use %s", export_formats_help());
    if (!format_for_path(file)) {
        const char *slash = strrchr(file, '/');
        const char *dot = strrchr(slash ? slash + 1 : file, '.');
        if (dot && dot[1])
            return lw_fail(err, 2, "%s: cannot write diagrams as \"%s\"; use %s", file, dot, export_formats_help());
        return lw_fail(err, 2, "%s: no file extension to choose the format by; use %s", file, export_formats_help());
    }
    return lw_check_output(file, err);
}

/* ---------- small helpers ---------- */

static void buf_esc(lw_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned cp;
        size_t k = (unsigned char)*s >= 0xC2 ? lw_text_format_at(s, &cp) : 0;
        if (k) { /* a format character is shown escaped, never raw (util.h) */
            char one[8] = {0};
            memcpy(one, s, k);
            lw_text_shown(b, one);
            s += k - 1;
            continue;
        }
        switch (*s) {
        case '&': lw_buf_printf(b, "&amp;"); break;
        case '<': lw_buf_printf(b, "&lt;"); break;
        case '>': lw_buf_printf(b, "&gt;"); break;
        case '"': lw_buf_printf(b, "&quot;"); break;
        default: lw_buf_printf(b, "%c", *s);
        }
    }
}

static void buf_reset(lw_buf *b)
{
    if (b->s) b->s[0] = 0;
    b->len = 0;
}

static const char *ms_str(double v, char *buf, size_t n)
{
    if (v == 0)
        snprintf(buf, n, "0");
    else if (v < 0.01)
        snprintf(buf, n, "%.3f", v);
    else if (v < 10)
        snprintf(buf, n, "%.2f", v);
    else if (v < 100)
        snprintf(buf, n, "%.1f", v);
    else
        snprintf(buf, n, "%.0f", v);
    return buf;
}

/* "64x56x56" with a multiplication sign, as a paper would set it. */
static void buf_shape(lw_buf *b, shape sh)
{
    char t[64];
    shape_format(sh, t, sizeof t);
    for (const char *c = t; *c; c++) lw_buf_printf(b, *c == 'x' ? "&#215;" : "%c", *c);
}

/* Names in DOT. agwrite quotes an ID and escapes its double quotes, but not
 * a backslash: a layer named "a" followed by a backslash would end its
 * quoted ID early (a syntax error for `dot`). Doubled, every backslash reads
 * back as part of the ID, so any name gives a well-formed file and distinct
 * names stay distinct IDs. Tooltips are Graphviz escStrings (backslash-N is
 * the node's name, backslash-n a newline): doubled there too, a name shows
 * as it is. Labels are HTML-like (buf_esc). */
static char *dot_escaped(const char *s, lw_buf *b)
{
    buf_reset(b);
    for (; *s; s++) {
        unsigned cp;
        size_t k = (unsigned char)*s >= 0xC2 ? lw_text_format_at(s, &cp) : 0;
        if (k) { /* one backslash: only a format character makes one (util.h) */
            char one[8] = {0};
            memcpy(one, s, k);
            lw_text_shown(b, one);
            s += k - 1;
        } else {
            lw_buf_printf(b, *s == '\\' ? "\\\\" : "%c", *s);
        }
    }
    if (!b->s) lw_buf_printf(b, "%s", "");
    return b->s;
}

static void set(void *obj, const char *k, const char *v)
{
    if (strcmp(k, "tooltip") == 0 && (strchr(v, '\\') || lw_text_has_format(v))) {
        lw_buf e = {0};
        agsafeset(obj, (char *)k, dot_escaped(v, &e), (char *)"");
        lw_buf_free(&e);
        return;
    }
    agsafeset(obj, (char *)k, (char *)v, (char *)"");
}

/* The node of a layer name (create: make it) in g or a subgraph of it. */
static Agnode_t *name_node(Agraph_t *g, const char *name, int create)
{
    if (!strchr(name, '\\') && !lw_text_has_format(name)) return agnode(g, (char *)name, create);
    lw_buf e = {0};
    Agnode_t *n = agnode(g, dot_escaped(name, &e), create);
    lw_buf_free(&e);
    return n;
}

/* An HTML-like value: agstrdup_html marks the string, and agxset's agstrdup
 * finds that same reference-counted string, so the mark survives. */
static void set_html(void *obj, const char *k, const char *html)
{
    Agraph_t *root = agroot(obj);
    char *h = agstrdup_html(root, (char *)html);
    agsafeset(obj, (char *)k, h, (char *)"");
    agstrfree(root, h);
}

/* Edge labels sit right beside the edge; the padding keeps a thick edge off
 * the first letters. */
static void set_edge_label(Agedge_t *e, const char *html)
{
    lw_buf b = {0};
    lw_buf_printf(&b, "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"3\"><TR><TD BALIGN=\"LEFT\">%s</TD></TR></TABLE>",
                  html);
    set_html(e, "label", b.s);
    lw_buf_free(&b);
}

static void defaults(Agraph_t *g, int kind, const char *const *kv)
{
    for (; kv[0]; kv += 2) agattr(g, kind, (char *)kv[0], (char *)kv[1]);
}

/* ---------- config classes (colours) ---------- */

/* The classes and their colours are palette.h's, shared with the TUI. */

/* ---------- the diagram being built ---------- */

typedef struct diagram {
    const plan *p;
    const cost_model *m;
    const network *net;
    const int *ci;            /* config index per layer */
    const strategy_eval *ev;
    strategy_eval own_ev;     /* when ci is not the plan's optimum */
    int optimal;              /* ci is the plan's optimum */
    Agraph_t *g;
    lw_buf b;                 /* scratch for labels */
    /* per layer: its module cluster, or NULL */
    Agraph_t **sub;
    int *group_len;           /* length of the module prefix, 0 if none */
    int classes_used[SPLIT__COUNT];
    int any_inter;            /* some edge drawn moves data between cluster nodes */
    config example;           /* a drawn config to explain the notation by */
    double *edge_tx, *edge_bytes; /* per edge at the drawn configs (edge_costs): t_x, and the bytes it moves */
} diagram;

static const config *cfg_of(const diagram *d, int li)
{
    return &d->m->configs[li][d->ci[li]];
}

static int split_dims(const config *c)
{
    int k = 0;
    for (int i = 0; i < NCDIMS; i++) k += c->deg[i] > 1;
    return k;
}

/* Records a config drawn: its colour goes into the legend, and the one split
 * over the most dimensions explains the notation. */
static void note_config(diagram *d, const config *c)
{
    d->classes_used[split_class_of(c)] = 1;
    if (split_dims(c) > split_dims(&d->example)) d->example = *c;
}

/* Bytes of edge e that cross between GPUs of different cluster nodes, forward
 * and backward, as cost_t_x counts them. recv_fwd (gpus entries, may be
 * NULL) accumulates what each consumer GPU receives from other nodes. */
static double inter_node_bytes(const diagram *d, int e, double *recv_fwd)
{
    const cost_model *m = d->m;
    const cluster *cl = m->cl;
    if (m->gpus <= cl->gpus_per_node) return 0;
    const config *cp = cfg_of(d, m->e_from[e]), *cc = cfg_of(d, m->e_to[e]);
    int np = config_tasks(cp), nc = config_tasks(cc);
    int *qs = lw_malloc(sizeof(int) * (size_t)np);
    double *vs = lw_malloc(sizeof(double) * (size_t)np);
    double total = 0;
    for (int k = 0; k < nc; k++)
        for (int x = 0, nx = cost_overlaps_of(m, e, cp, cc, k, qs, vs); x < nx; x++) {
            if (cluster_node_of(cl, qs[x]) == cluster_node_of(cl, k)) continue;
            double b = vs[x] * m->elem_bytes;
            total += 2 * b;
            if (recv_fwd) recv_fwd[k] += b;
        }
    free(qs);
    free(vs);
    return total;
}

/* Module of a layer, from its name: "mixed_5b/branch1x1" -> "mixed_5b",
 * "layer2.0.conv1" -> "layer2.0". Returns the prefix length, 0 if none. */
static int module_prefix_len(const char *name)
{
    const char *s = strchr(name, '/');
    if (s && s > name && s[1]) return (int)(s - name);
    const char *d1 = strchr(name, '.');
    if (d1 && d1 > name) {
        const char *d2 = strchr(d1 + 1, '.');
        if (d2 && d2 > d1 + 1 && d2[1]) return (int)(d2 - name);
    }
    return 0;
}

static int same_module(const char *a, int la, const char *b, int lb)
{
    return la > 0 && la == lb && strncmp(a, b, (size_t)la) == 0;
}

/* Puts the visible layers of each module (two or more) into a cluster. */
static void make_modules(diagram *d, const unsigned char *visible)
{
    int n = d->net->n_layers;
    d->sub = lw_calloc((size_t)n, sizeof(Agraph_t *));
    d->group_len = lw_calloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        if (visible && !visible[i]) continue;
        const char *ni = d->net->layers[i].name;
        int li = module_prefix_len(ni);
        if (!li || d->sub[i]) continue;
        int count = 0;
        for (int j = i; j < n; j++)
            if ((!visible || visible[j]) && same_module(ni, li, d->net->layers[j].name,
                                                        module_prefix_len(d->net->layers[j].name)))
                count++;
        if (count < 2) continue;
        buf_reset(&d->b);
        lw_buf_printf(&d->b, "cluster_%.*s", li, ni);
        lw_buf e = {0};
        Agraph_t *s = agsubg(d->g, dot_escaped(d->b.s, &e), 1);
        lw_buf_free(&e);
        buf_reset(&d->b);
        lw_buf_printf(&d->b, "<B>");
        char *mod = lw_malloc((size_t)li + 1);
        memcpy(mod, ni, (size_t)li);
        mod[li] = 0;
        buf_esc(&d->b, mod);
        free(mod);
        lw_buf_printf(&d->b, "</B>");
        set_html(s, "label", d->b.s);
        for (int j = i; j < n; j++)
            if ((!visible || visible[j]) && same_module(ni, li, d->net->layers[j].name,
                                                        module_prefix_len(d->net->layers[j].name))) {
                d->sub[j] = s;
                d->group_len[j] = li;
            }
    }
}

static void graph_defaults(diagram *d)
{
    static const char *const gdef[] = {"fontname", "Helvetica", "fontsize", "12", NULL};
    defaults(d->g, AGRAPH, gdef);
    set(d->g, "rankdir", "TB");
    set(d->g, "bgcolor", "white");
    set(d->g, "pad", "0.25");
    set(d->g, "nodesep", "0.3");
    set(d->g, "ranksep", "0.3");
    set(d->g, "labelloc", "t");
    set(d->g, "labeljust", "c");
    set(d->g, "newrank", "true");
    static const char *const ndef[] = {"shape", "box", "style", "rounded,filled", "fontname", "Helvetica",
                                       "fontsize", "11", "margin", "0.08,0.04", "penwidth", "1.2", NULL};
    defaults(d->g, AGNODE, ndef);
    static const char *const edef[] = {"fontname", "Helvetica", "fontsize", "9", "arrowsize", "0.7",
                                       "color", "#444444", NULL};
    defaults(d->g, AGEDGE, edef);
}

static void style_clusters(diagram *d)
{
    for (Agraph_t *s = agfstsubg(d->g); s; s = agnxtsubg(s)) {
        set(s, "style", "rounded,filled");
        set(s, "fillcolor", "#F6F6F6");
        set(s, "color", "#BDBDBD");
        set(s, "labeljust", "l");
        set(s, "fontsize", "11");
        set(s, "margin", "10");
    }
}

/* The graph's label: the title, then the key (colours of the configs used
 * and what the labels mean). A label, not a node: it takes no rank, so it
 * neither stretches the first rank of the layout nor counts as a node. */
static void header(diagram *d, const char *what, const char *const *notes)
{
    const plan *p = d->p;
    char t1[32], t2[32], t3[32], t4[32];
    lw_buf *b = &d->b;
    buf_reset(b);
    /* one table row a line: Graphviz places <SUB> right only inside cells */
    lw_buf_printf(b, "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\"><TR><TD><B>");
    buf_esc(b, d->net->name);
    lw_buf_printf(b, "</B> on ");
    buf_esc(b, p->cl->name);
    lw_buf_printf(b, " &#183; %d GPU%s &#183; batch %ld &#183; ", p->gpus, p->gpus == 1 ? "" : "s", p->batch);
    buf_esc(b, what);
    int pins = 0;
    for (int i = 0; d->optimal && p->pinned && i < d->net->n_layers; i++) pins += p->pinned[i] >= 0;
    char which[64];
    if (!d->optimal)
        snprintf(which, sizeof which, "given strategy");
    else if (pins)
        snprintf(which, sizeof which, "optimal strategy with %d layer%s pinned", pins, pins == 1 ? "" : "s");
    else
        snprintf(which, sizeof which, "optimal strategy");
    lw_buf_printf(b, "</TD></TR><TR><TD><FONT POINT-SIZE=\"11\">%s: %s ms per step = compute %s + sync %s + "
                     "transfer %s &#183; %.0f images/s</FONT></TD></TR><TR><TD><FONT POINT-SIZE=\"10\">",
                  which, ms_str(d->ev->total_ms, t1, sizeof t1),
                  ms_str(d->ev->compute_ms, t2, sizeof t2), ms_str(d->ev->sync_ms, t3, sizeof t3),
                  ms_str(d->ev->transfer_ms, t4, sizeof t4), d->ev->images_per_s);
    /* the colour key: a square of each config class drawn, in its line colour */
    int first = 1;
    for (int c = 0; c < SPLIT__COUNT; c++) {
        if (!d->classes_used[c]) continue;
        lw_buf_printf(b, "%s<FONT COLOR=\"%s\" POINT-SIZE=\"13\">&#9632;</FONT> %s", first ? "" : " &#160; &#160; ",
                      split_colours[c].line, split_colours[c].name);
        first = 0;
    }
    lw_buf_printf(b, "</FONT></TD></TR>");
    if (split_dims(&d->example) > 0) {
        static const char *const dim_word[NCDIMS] = {"batch", "channels", "rows", "columns", "partial sums",
                                                     "replicas"};
        char cfg[64];
        config_format(&d->example, cfg, sizeof cfg);
        lw_buf_printf(b, "<TR><TD><FONT POINT-SIZE=\"9\" COLOR=\"#444444\">config %s: ", cfg);
        first = 1;
        for (int i = 0; i < NCDIMS; i++) {
            if (d->example.deg[i] == 1) continue;
            lw_buf_printf(b, "%s%s in %d", first ? "" : " &#215; ", dim_word[i], d->example.deg[i]);
            first = 0;
        }
        lw_buf_printf(b, " pieces</FONT></TD></TR>");
    }
    for (int i = 0; notes && notes[i]; i++)
        lw_buf_printf(b, "<TR><TD><FONT POINT-SIZE=\"9\" COLOR=\"#444444\">%s</FONT></TD></TR>", notes[i]);
    lw_buf_printf(b, "<TR><TD HEIGHT=\"6\"></TD></TR></TABLE>");
    set_html(d->g, "label", b->s);
    set(d->g, "fontsize", "14");
}

/* A layer as a node: name, type and output shape, config, t_c and t_s. */
static Agnode_t *layer_node(diagram *d, int li)
{
    const layer *l = &d->net->layers[li];
    Agraph_t *parent = d->sub && d->sub[li] ? d->sub[li] : d->g;
    Agnode_t *n = name_node(parent, l->name, 1);
    const config *c = cfg_of(d, li);
    split_class cc = split_class_of(c);
    note_config(d, c);
    char shp[64], cfg[64], tc[32], ts[32];
    shape_format(l->out, shp, sizeof shp);
    config_format_layer(l, c, cfg, sizeof cfg);
    const layer_eval *le = &d->ev->layers[li];
    /* rows of a borderless table rather than <BR/>: a little air between the
     * lines keeps the name's underscores off the line below */
    buf_reset(&d->b);
    lw_buf_printf(&d->b, "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"1\" CELLPADDING=\"0\"><TR><TD><B>");
    buf_esc(&d->b, l->name + (d->group_len && d->group_len[li] ? d->group_len[li] + 1 : 0));
    lw_buf_printf(&d->b, "</B></TD></TR><TR><TD><FONT POINT-SIZE=\"9\">%s &#183; ", layer_type_name(l->type));
    buf_shape(&d->b, l->out);
    lw_buf_printf(&d->b, "</FONT></TD></TR><TR><TD><FONT POINT-SIZE=\"9\"><B>%s</B>%s &#183; t<SUB>c</SUB> %s &#183; "
                         "t<SUB>s</SUB> %s ms</FONT></TD></TR></TABLE>",
                  strcmp(cfg, "1") ? cfg : "1 GPU",
                  d->optimal && d->p->pinned && d->p->pinned[li] >= 0 ? " (pinned)" : "",
                  ms_str(le->compute_ms, tc, sizeof tc), ms_str(le->sync_ms, ts, sizeof ts));
    set_html(n, "label", d->b.s);
    set(n, "fillcolor", split_colours[cc].fill);
    set(n, "color", split_colours[cc].line);
    buf_reset(&d->b);
    lw_buf_printf(&d->b, "%s: %s %s, config %s", l->name, layer_type_name(l->type), shp, cfg);
    set(n, "tooltip", d->b.s);
    return n;
}

/* Edges with a cost at the chosen configs: bytes moved and t_x. */
static void transfer_edge(diagram *d, int e, double max_tx, const char *prefix)
{
    const cost_model *m = d->m;
    int a = m->e_from[e], b = m->e_to[e];
    Agnode_t *na = name_node(d->g, d->net->layers[a].name, 0), *nb = name_node(d->g, d->net->layers[b].name, 0);
    Agedge_t *ed = agedge(d->g, na, nb, NULL, 1);
    const double bytes = d->edge_bytes[e], tx = d->edge_tx[e];
    double inter = inter_node_bytes(d, e, NULL);
    if (inter > 0) d->any_inter = 1;
    char sb[32], st[32], si[32];
    buf_reset(&d->b);
    if (prefix) lw_buf_printf(&d->b, "%s &#183; ", prefix);
    if (bytes == 0) {
        lw_buf_printf(&d->b, "0 B");
        set_edge_label(ed, d->b.s);
        set(ed, "fontcolor", "#8A8A8A");
        set(ed, "color", "#9A9A9A");
    } else {
        lw_buf_printf(&d->b, "<B>%s</B> &#183; t<SUB>x</SUB> %s ms", lw_format_bytes(bytes, sb, sizeof sb),
                      ms_str(tx, st, sizeof st));
        if (inter > 0) lw_buf_printf(&d->b, "<BR/>%s across nodes", lw_format_bytes(inter, si, sizeof si));
        set_edge_label(ed, d->b.s);
        char pw[16];
        snprintf(pw, sizeof pw, "%.2f", 1.2 + (max_tx > 0 ? 2.8 * tx / max_tx : 0));
        set(ed, "penwidth", pw);
        set(ed, "color", inter > 0 ? "#C0392B" : "#222222");
        if (inter > 0) set(ed, "fontcolor", "#A93226");
    }
    buf_reset(&d->b);
    lw_buf_printf(&d->b, "%s -> %s: %s, t_x %s ms", d->net->layers[a].name, d->net->layers[b].name,
                  lw_format_bytes(bytes, sb, sizeof sb), ms_str(tx, st, sizeof st));
    set(ed, "tooltip", d->b.s);
}

/* Every edge's t_x and bytes at the drawn configs, one evaluation each
 * (cost_edge_ms: the table's t_x, or computed on a model without tables);
 * the largest t_x. */
static double edge_costs(diagram *d)
{
    const cost_model *m = d->m;
    d->edge_tx = lw_calloc((size_t)m->n_edges + 1, sizeof(double));
    d->edge_bytes = lw_calloc((size_t)m->n_edges + 1, sizeof(double));
    double mx = 0;
    for (int e = 0; e < m->n_edges; e++) {
        d->edge_tx[e] = cost_edge_ms(m, e, d->ci[m->e_from[e]], d->ci[m->e_to[e]], &d->edge_bytes[e]);
        if (d->edge_tx[e] > mx) mx = d->edge_tx[e];
    }
    return mx;
}

/* ---------- views ---------- */

static void build_graph_view(diagram *d)
{
    graph_defaults(d);
    make_modules(d, NULL);
    style_clusters(d);
    for (int i = 0; i < d->net->n_layers; i++) layer_node(d, i);
    double mx = edge_costs(d);
    for (int e = 0; e < d->m->n_edges; e++) transfer_edge(d, e, mx, NULL);
    const char *notes[] = {"edge: bytes moved between GPUs per step (forward + backward) and its t<SUB>x</SUB>",
                           d->any_inter ? "red edge: the data crosses cluster nodes" : NULL, NULL};
    header(d, "computation graph", notes);
}

/* Which original layers an edge made by eliminations stands for. */
typedef struct absorbed {
    int n_layers, n_orig, n_steps;
    unsigned char *layers;    /* [n_steps][n_layers] */
    int *orig_edges;          /* [n_steps] original edges folded in */
} absorbed;

static void absorbed_build(absorbed *a, const search_result *r, int n_layers)
{
    a->n_layers = n_layers;
    a->n_orig = r->n_edges_original;
    a->n_steps = r->n_steps;
    a->layers = lw_calloc((size_t)(r->n_steps ? r->n_steps : 1) * (size_t)n_layers, 1);
    a->orig_edges = lw_calloc((size_t)(r->n_steps ? r->n_steps : 1), sizeof(int));
    for (int s = 0; s < r->n_steps; s++) {
        const elim_step *st = &r->steps[s];
        unsigned char *row = &a->layers[(size_t)s * (size_t)n_layers];
        int parts[2] = {st->e1, st->e2};
        for (int k = 0; k < 2; k++) {
            int e = parts[k];
            if (e < a->n_orig) {
                a->orig_edges[s]++;
            } else {
                int ps = e - a->n_orig; /* created by an earlier step */
                const unsigned char *prow = &a->layers[(size_t)ps * (size_t)n_layers];
                for (int i = 0; i < n_layers; i++) row[i] |= prow[i];
                a->orig_edges[s] += a->orig_edges[ps];
            }
        }
        if (st->kind != ELIM_EDGE && st->node >= 0 && st->node < n_layers) row[st->node] = 1;
    }
}

static void absorbed_free(absorbed *a)
{
    free(a->layers);
    free(a->orig_edges);
}

/* "a, b, c" for up to `max` names, else "a, b, … z"; layers all of one
 * module are written "in mixed_6b: a, b, … z". */
static void list_layers(lw_buf *b, const network *net, const unsigned char *row, int max, int *count)
{
    int n = 0, first = -1, last = -1;
    for (int i = 0; i < net->n_layers; i++)
        if (row[i]) {
            n++;
            last = i;
            if (first < 0) first = i;
        }
    *count = n;
    if (!n) return;
    int plen = module_prefix_len(net->layers[first].name);
    for (int i = first; i <= last && plen; i++)
        if (row[i] && !same_module(net->layers[first].name, plen, net->layers[i].name,
                                   module_prefix_len(net->layers[i].name)))
            plen = 0;
    int skip = 0;
    if (plen && n > 1) {
        char *mod = lw_malloc((size_t)plen + 1);
        memcpy(mod, net->layers[first].name, (size_t)plen);
        mod[plen] = 0;
        lw_buf_printf(b, "in ");
        buf_esc(b, mod);
        lw_buf_printf(b, ": ");
        free(mod);
        skip = plen + 1;
    }
    int shown = 0;
    for (int i = first; i <= last; i++) {
        if (!row[i]) continue;
        if (n <= max || shown < max - 1) {
            if (shown) lw_buf_printf(b, ", ");
            buf_esc(b, net->layers[i].name + skip);
            shown++;
        } else {
            lw_buf_printf(b, ", &#8230; ");
            buf_esc(b, net->layers[last].name + skip);
            break;
        }
    }
}

static void build_reduced_view(diagram *d, int k)
{
    const search_result *r = d->p->sr;
    int n = d->net->n_layers;
    int n_all_edges = r->n_edges_original + r->n_steps;
    unsigned char *alive_n = lw_calloc((size_t)n, 1);
    unsigned char *alive_e = lw_calloc((size_t)(n_all_edges ? n_all_edges : 1), 1);
    search_state_at(r, k, alive_n, alive_e);
    int left = 0, edges_left = 0;
    for (int i = 0; i < n; i++) left += alive_n[i];
    for (int e = 0; e < n_all_edges; e++) edges_left += alive_e[e];

    graph_defaults(d);
    make_modules(d, alive_n);
    style_clusters(d);
    char what[160];
    snprintf(what, sizeof what, "after %d of %d steps: %d node%s, %d edge%s left", k, r->n_steps, left,
             left == 1 ? "" : "s", edges_left, edges_left == 1 ? "" : "s");
    for (int i = 0; i < n; i++)
        if (alive_n[i]) layer_node(d, i);

    double mx = edge_costs(d);
    for (int e = 0; e < r->n_edges_original; e++) {
        if (!alive_e[e]) continue;
        char id[32];
        snprintf(id, sizeof id, "e%d", e);
        transfer_edge(d, e, mx, id);
    }

    absorbed ab;
    absorbed_build(&ab, r, n);
    lw_buf tip = {0};
    for (int s = 0; s < r->n_steps; s++) {
        const elim_step *st = &r->steps[s];
        if (!alive_e[st->new_edge]) continue;
        const char *from = d->net->layers[st->from].name, *to = d->net->layers[st->to].name;
        Agedge_t *ed = agedge(d->g, name_node(d->g, from, 0), name_node(d->g, to, 0), NULL, 1);
        const unsigned char *row = &ab.layers[(size_t)s * (size_t)n];
        int nc_to = d->m->n_configs[st->to];
        size_t cells = (size_t)d->m->n_configs[st->from] * (size_t)nc_to;
        double mn = st->table[0];
        for (size_t c = 1; c < cells; c++)
            if (st->table[c] < mn) mn = st->table[c];
        double here = st->table[d->ci[st->from] * nc_to + d->ci[st->to]];
        char t1[32], t2[32];
        buf_reset(&d->b);
        lw_buf_printf(&d->b, "<B>e%d</B> = ", st->new_edge);
        if (st->kind == ELIM_NODE) {
            lw_buf_printf(&d->b, "node elim of <B>");
            buf_esc(&d->b, d->net->layers[st->node].name);
            lw_buf_printf(&d->b, "</B>");
        } else if (st->kind == ELIM_FOLD) {
            lw_buf_printf(&d->b, "e%d + fold of <B>", st->e2);
            buf_esc(&d->b, d->net->layers[st->node].name);
            lw_buf_printf(&d->b, "</B> into ");
            buf_esc(&d->b, d->net->layers[st->into].name);
        } else {
            lw_buf_printf(&d->b, "edge elim of e%d, e%d", st->e1, st->e2);
        }
        int count = 0;
        lw_buf_printf(&d->b, "<BR/><FONT POINT-SIZE=\"8\">");
        lw_buf tmp = {0};
        list_layers(&tmp, d->net, row, 3, &count);
        if (count)
            lw_buf_printf(&d->b, "stands for %d layer%s: %s<BR/>", count, count == 1 ? "" : "s", tmp.s);
        else
            lw_buf_printf(&d->b, "stands for %d parallel edges<BR/>", ab.orig_edges[s]);
        lw_buf_free(&tmp);
        lw_buf_printf(&d->b, "</FONT>min %s ms &#183; %s ms at the shown configs", ms_str(mn, t1, sizeof t1),
                      ms_str(here, t2, sizeof t2));
        set_edge_label(ed, d->b.s);
        set(ed, "style", "bold,dashed");
        set(ed, "penwidth", "2.2");
        set(ed, "color", "#7E3F9E");
        set(ed, "fontcolor", "#4A235A");
        /* the full list where there is room for it: the SVG tooltip */
        buf_reset(&tip);
        lw_buf_printf(&tip, "e%d (%s -> %s) stands for", st->new_edge, from, to);
        for (int i = 0; i < n; i++)
            if (row[i]) lw_buf_printf(&tip, " %s", d->net->layers[i].name);
        lw_buf_printf(&tip, " and %d original edge%s", ab.orig_edges[s], ab.orig_edges[s] == 1 ? "" : "s");
        set(ed, "tooltip", tip.s);
    }
    lw_buf_free(&tip);
    absorbed_free(&ab);
    const char *notes[] = {"eN: edge N of Algorithm 1 &#183; bold dashed: an edge an elimination or fold made, with the layers "
                           "it stands for and the least cost in its table",
                           d->any_inter ? "red edge: the data crosses cluster nodes" : NULL, NULL};
    header(d, what, notes);
    free(alive_n);
    free(alive_e);
}

/* A layer's cells in the strategy view, one per GPU: the block of its
 * output that GPU computes (first-last of each split dimension, "all", or
 * a dash where the GPU is idle), outlined red where the GPU receives from
 * another node (recv: that layer's bytes per GPU from other nodes). */
static void gpu_cells(lw_buf *b, const layer *l, const config *c, long batch, int G, const double *recv)
{
    split_class cc = split_class_of(c);
    int tasks = config_tasks(c);
    for (int g = 0; g < G; g++) {
        if (g >= tasks) {
            lw_buf_printf(b, "<TD BGCOLOR=\"#FAFAFA\"><FONT COLOR=\"#B0B0B0\">&#8211;</FONT></TD>");
            continue;
        }
        int coord[NDIMS];
        config_task_coords(c, g, coord);
        int red = recv[g] > 0;
        lw_buf_printf(b, "<TD BGCOLOR=\"%s\"%s><FONT POINT-SIZE=\"9\">", split_colours[cc].fill,
                      red ? " BORDER=\"2\" COLOR=\"#C0392B\"" : "");
        int any = 0;
        for (int dd = 0; dd < NDIMS; dd++) {
            if (c->deg[dd] == 1) continue;
            long S = layer_dim_size(l, dd, batch);
            char letter = dd == DIM_H && l->out.rank == 3 ? 's' : config_dim_letter[dd];
            lw_buf_printf(b, "%s%c %ld&#8211;%ld", any ? " " : "", letter, piece_lo(S, c->deg[dd], coord[dd]),
                          piece_hi(S, c->deg[dd], coord[dd]) - 1);
            any = 1;
        }
        /* a contraction split's partial sums (of input features piece j of
         * r), a replica's copy number */
        int rj, xj;
        config_task_rx(c, g, &rj, &xj);
        if (c->deg[DIM_R] > 1) lw_buf_printf(b, "%s&#931;%d/%d", any ? " " : "", rj + 1, c->deg[DIM_R]), any = 1;
        if (c->deg[DIM_X] > 1) lw_buf_printf(b, "%scopy %d", any ? " " : "", xj + 1), any = 1;
        if (!any) lw_buf_printf(b, "all");
        lw_buf_printf(b, "</FONT></TD>");
    }
}

/* One table: a row per layer, a column per GPU grouped by cluster node; each
 * cell the block of the layer's output that GPU computes. */
static void build_strategy_view(diagram *d)
{
    const cost_model *m = d->m;
    const cluster *cl = m->cl;
    int G = m->gpus, n = d->net->n_layers;
    int gpn = cl->gpus_per_node > 0 ? cl->gpus_per_node : G;
    int nodes = (G + gpn - 1) / gpn;
    int multi = nodes > 1;
    graph_defaults(d);

    double *inter = lw_calloc((size_t)n, sizeof(double));
    double *recv = lw_calloc((size_t)n * (size_t)G, sizeof(double)); /* [layer][gpu] fwd bytes from other nodes */
    if (multi)
        for (int e = 0; e < m->n_edges; e++) inter[m->e_to[e]] += inter_node_bytes(d, e, &recv[(size_t)m->e_to[e] * G]);

    lw_buf *b = &d->b;
    buf_reset(b);
    int ncols = 2 + G + (nodes - 1) + 3 + (multi ? 1 : 0);
    lw_buf_printf(b, "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\" COLOR=\"#C8C8C8\">");
    /* header: node groups, then GPU ids */
    lw_buf_printf(b, "<TR><TD ROWSPAN=\"2\" ALIGN=\"LEFT\" BGCOLOR=\"#E4E4E4\"><B>layer</B></TD>"
                     "<TD ROWSPAN=\"2\" BGCOLOR=\"#E4E4E4\"><B>config</B></TD>");
    for (int nd = 0; nd < nodes; nd++) {
        int first = nd * gpn, cnt = G - first < gpn ? G - first : gpn;
        if (nd) lw_buf_printf(b, "<TD ROWSPAN=\"%d\" BORDER=\"0\" WIDTH=\"4\" BGCOLOR=\"#5A5A5A\"></TD>", n + 2);
        lw_buf_printf(b, "<TD COLSPAN=\"%d\" BGCOLOR=\"#D0D0D0\"><B>node %d</B></TD>", cnt, nd);
    }
    lw_buf_printf(b, "<TD ROWSPAN=\"2\" BGCOLOR=\"#E4E4E4\"><B>t<SUB>c</SUB> ms</B></TD>"
                     "<TD ROWSPAN=\"2\" BGCOLOR=\"#E4E4E4\"><B>t<SUB>s</SUB> ms</B></TD>"
                     "<TD ROWSPAN=\"2\" BGCOLOR=\"#E4E4E4\"><B>t<SUB>x</SUB> ms</B></TD>");
    if (multi) lw_buf_printf(b, "<TD ROWSPAN=\"2\" BGCOLOR=\"#E4E4E4\"><B>across<BR/>nodes</B></TD>");
    lw_buf_printf(b, "</TR><TR>");
    for (int g = 0; g < G; g++) lw_buf_printf(b, "<TD BGCOLOR=\"#E4E4E4\"><B>GPU %d</B></TD>", g);
    lw_buf_printf(b, "</TR>");

    /* rows: shaded in bands, a band per module (or per layer where there are none) */
    int band = 0, prev_len = 0;
    const char *prev = NULL;
    for (int li = 0; li < n; li++) {
        const layer *l = &d->net->layers[li];
        int plen = module_prefix_len(l->name);
        if (!(prev && same_module(prev, prev_len, l->name, plen))) band ^= 1;
        prev = l->name;
        prev_len = plen;
        const char *shade = band ? "#FFFFFF" : "#F1F1F1";
        const config *c = cfg_of(d, li);
        split_class cc = split_class_of(c);
        note_config(d, c);
        char cfg[64], t1[32], t2[32], t3[32], sb[32];
        config_format_layer(&d->m->net->layers[li], c, cfg, sizeof cfg);
        int hot = inter[li] > 0;
        lw_buf_printf(b, "<TR><TD ALIGN=\"LEFT\" BGCOLOR=\"%s\">%s", hot ? "#F8D3CF" : shade, hot ? "<B>" : "");
        buf_esc(b, l->name);
        lw_buf_printf(b, "%s</TD><TD BGCOLOR=\"%s\"><FONT COLOR=\"%s\"><B>%s</B></FONT></TD>", hot ? "</B>" : "",
                      shade, split_colours[cc].line, cfg);
        gpu_cells(b, l, c, m->batch, G, &recv[(size_t)li * G]);
        const layer_eval *le = &d->ev->layers[li];
        lw_buf_printf(b, "<TD ALIGN=\"RIGHT\" BGCOLOR=\"%s\">%s</TD><TD ALIGN=\"RIGHT\" BGCOLOR=\"%s\">%s</TD>"
                         "<TD ALIGN=\"RIGHT\" BGCOLOR=\"%s\">%s</TD>",
                      shade, ms_str(le->compute_ms, t1, sizeof t1), shade, ms_str(le->sync_ms, t2, sizeof t2), shade,
                      ms_str(le->transfer_ms, t3, sizeof t3));
        if (multi) {
            if (hot)
                lw_buf_printf(b, "<TD ALIGN=\"RIGHT\" BGCOLOR=\"#F8D3CF\"><FONT COLOR=\"#A93226\"><B>%s</B></FONT></TD>",
                              lw_format_bytes(inter[li], sb, sizeof sb));
            else
                lw_buf_printf(b, "<TD BGCOLOR=\"%s\"></TD>", shade);
        }
        lw_buf_printf(b, "</TR>");
    }
    lw_buf_printf(b, "<TR><TD COLSPAN=\"%d\" ALIGN=\"LEFT\" BORDER=\"0\"><FONT POINT-SIZE=\"10\">"
                     "A cell is the block of the layer's output that GPU computes: n samples, c channels, "
                     "h rows, w columns (first&#8211;last, inclusive); &#8211;: idle.",
                  ncols);
    if (multi)
        lw_buf_printf(b, "<BR ALIGN=\"LEFT\"/>Red: the layer's inputs cross cluster nodes; a red cell's GPU receives "
                         "from another node. \"across nodes\": bytes over inter-node links per step (fwd + bwd).");
    lw_buf_printf(b, "<BR ALIGN=\"LEFT\"/></FONT></TD></TR></TABLE>");

    Agnode_t *node = agnode(d->g, (char *)"strategy", 1);
    set_html(node, "label", b->s);
    set(node, "shape", "plaintext");
    set(node, "style", "");
    set(node, "margin", "0");
    buf_reset(b);
    lw_buf_printf(b, "strategy of %s on %d GPUs", d->net->name, G);
    set(node, "tooltip", b->s);
    header(d, "which GPU computes which block of each layer", NULL);
    free(inter);
    free(recv);
}

/* ---------- a pipelined plan's strategy ---------- */

/* Stage i as a cluster ("cluster_stageN": Graphviz draws a subgraph whose
 * name starts with "cluster" as a box), labelled with its GPUs and t_i,
 * holding one table node: its layers, each config on the stage's group
 * (GPU numbers relative to its first) and t_c per micro-batch. */
static Agnode_t *stage_cluster(diagram *d, int i, const plan_stage_summary *s)
{
    char name[48], t1[32], t2[32], t3[32];
    snprintf(name, sizeof name, "cluster_stage%d", i + 1);
    Agraph_t *sub = agsubg(d->g, name, 1);
    lw_buf *b = &d->b;
    buf_reset(b);
    lw_buf_printf(b, "stage %d: GPUs %d-%d, t%d = %s ms (f %s + p2p %s) per micro-batch, holds %.3g", i + 1, s->gpu0,
                  s->gpu0 + s->gpus - 1, i + 1, ms_str(s->t_ms, t1, sizeof t1), ms_str(s->f_ms, t2, sizeof t2),
                  ms_str(s->p2p_ms, t3, sizeof t3), s->held);
    set(sub, "label", b->s);
    buf_reset(b);
    lw_buf_printf(b, "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\" COLOR=\"#C8C8C8\">"
                     "<TR><TD ALIGN=\"LEFT\" BGCOLOR=\"#E4E4E4\"><B>layer</B></TD><TD BGCOLOR=\"#E4E4E4\"><B>config</B>"
                     "</TD><TD BGCOLOR=\"#E4E4E4\"><B>t<SUB>c</SUB> ms</B></TD></TR>");
    for (int li = s->first; li < s->last; li++) {
        config c;
        double tc = 0;
        if (plan_stage_layer_config(d->p, li, &c, &tc) != 0) continue;
        note_config(d, &c);
        char cfg[64];
        config_format_layer(&d->net->layers[li], &c, cfg, sizeof cfg);
        lw_buf_printf(b, "<TR><TD ALIGN=\"LEFT\">");
        buf_esc(b, d->net->layers[li].name);
        lw_buf_printf(b, "</TD><TD><FONT COLOR=\"%s\"><B>%s</B></FONT></TD><TD ALIGN=\"RIGHT\">%s</TD></TR>",
                      split_colours[split_class_of(&c)].line, cfg, ms_str(tc, t1, sizeof t1));
    }
    lw_buf_printf(b, "</TABLE>");
    snprintf(name, sizeof name, "stage%d", i + 1);
    Agnode_t *node = agnode(sub, name, 1);
    set_html(node, "label", b->s);
    set(node, "shape", "plaintext");
    set(node, "style", "");
    set(node, "margin", "0");
    return node;
}

/* The strategy view of a pipelined plan: a cluster per stage, in order,
 * an edge from each to the next with its send (the activation forward, its
 * gradient back), the pipeline's step in the title. */
static void build_pipeline_view(diagram *d)
{
    graph_defaults(d);
    int n = plan_stage_count(d->p);
    Agnode_t *prev = NULL;
    double prev_p2p = 0;
    for (int i = 0; i < n; i++) {
        plan_stage_summary s;
        if (plan_stage_info(d->p, i, &s) != 0) break;
        Agnode_t *node = stage_cluster(d, i, &s);
        if (prev) {
            char lab[64], t1[32];
            snprintf(lab, sizeof lab, "activation / gradient: %s ms", ms_str(prev_p2p, t1, sizeof t1));
            Agedge_t *e = agedge(d->g, prev, node, NULL, 1);
            set(e, "label", lab);
        }
        prev = node;
        prev_p2p = s.p2p_ms;
    }
    style_clusters(d);
    plan_pipeline_summary ps;
    plan_pipeline_info(d->p, &ps);
    char what[160], note[200], t1[32];
    snprintf(what, sizeof what, "pipeline of %d stages x %d micro-batches (%s): %s ms per step, bubble %.1f%%",
             ps.stages, ps.microbatches, ps.schedule_name, ms_str(ps.step_ms, t1, sizeof t1),
             100 * ps.bubble_fraction);
    snprintf(note, sizeof note, "a box per stage on its group of GPUs; the line below the title is the one-stage "
                                "optimum, for comparison");
    const char *notes[] = {note, NULL};
    header(d, what, notes);
}

/* ---------- rendering ---------- */

/* Graphviz reports through agerr, which prints to stderr by default: that
 * would land on the TUI's screen. Keep the last message for our error. */
static char gv_last_msg[512];

static int gv_capture(char *msg)
{
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) n--;
    if (n >= sizeof gv_last_msg) n = sizeof gv_last_msg - 1;
    memcpy(gv_last_msg, msg, n);
    gv_last_msg[n] = 0;
    return 0;
}

/* One Graphviz context for the whole process, freed at exit. Graphviz 2.43's
 * pango plugin keeps, in a static, a pointer to a font name that the context
 * owns: after gvFreeContext the next context's first label compares against
 * freed memory (ASan sees it). A context kept for the process sidesteps that,
 * and saves loading the plugins on every export. */
static GVC_t *shared_gvc;

static void gvc_release(void)
{
    if (shared_gvc) gvFreeContext(shared_gvc);
    shared_gvc = NULL;
}

static GVC_t *gvc_get(void)
{
    if (!shared_gvc) {
        shared_gvc = gvContext();
        if (shared_gvc) atexit(gvc_release);
    }
    return shared_gvc;
}

/* Sizes Graphviz is asked to lay out. Beyond about 18 000 nodes its dot
 * layout runs out of memory inside mincross and crashes the process (2.42);
 * a strategy table of 2000 layers x 64 GPUs already takes 12 s and 1 GB.
 * The limits keep well inside what renders in seconds, and are checked
 * before anything is built. */
#define EXPORT_MAX_LAYOUT_NODES 5000
#define EXPORT_MAX_LAYOUT_EDGES 10000
#define EXPORT_MAX_TABLE_CELLS 65536

/* Checks the sizes of a view before it is built. */
static int check_sizes(const plan *p, export_view view, int step, const format_info *fmt, const char *file,
                       lw_error *err)
{
    const cost_model *m = p->cm;
    if (view == VIEW_STRATEGY) {
        double cells = (double)m->n_layers * m->gpus;
        if (cells > EXPORT_MAX_TABLE_CELLS)
            return lw_fail(err, 2,
                           "%s: the strategy view would be a table of %d layers x %d GPUs (%.0f cells); at most %d "
                           "cells can be drawn (use fewer GPUs, or a smaller network)",
                           file, m->n_layers, m->gpus, cells, EXPORT_MAX_TABLE_CELLS);
        return 0;
    }
    if (!fmt->gv_format) return 0; /* DOT text: no layout */
    int nodes = m->n_layers, edges = m->n_edges;
    if (view == VIEW_REDUCED) {
        int k = step < 0 ? p->sr->n_steps : step;
        for (int s = 0; s < k; s++) {
            if (p->sr->steps[s].kind != ELIM_EDGE) {
                nodes--;
                edges -= 1; /* two edges become one (a fold: its one edge goes, its neighbour's is replaced) */
            } else {
                edges -= 1; /* two edges merge */
            }
        }
    }
    if (nodes > EXPORT_MAX_LAYOUT_NODES || edges > EXPORT_MAX_LAYOUT_EDGES)
        return lw_fail(err, 2,
                       "%s: the %s view has %d layers and %d edges; Graphviz lays out at most %d layers and %d edges "
                       "here (write .dot instead, and lay it out elsewhere)",
                       file, export_view_name(view), nodes, edges, EXPORT_MAX_LAYOUT_NODES, EXPORT_MAX_LAYOUT_EDGES);
    return 0;
}

/* The diagram in memory: DOT text by agwrite, or Graphviz's rendering by
 * gvRenderData (Graphviz never writes a file itself: a short write there
 * would exit the process). Returns 0 with *data (free with free()). */
static int render_to_memory(GVC_t *gvc, Agraph_t *g, const format_info *fmt, const char *file, char **data,
                            size_t *len, lw_error *err)
{
    *data = NULL;
    *len = 0;
    if (!fmt->gv_format) {
        FILE *m = open_memstream(data, len);
        if (!m) lw_out_of_memory(BUFSIZ); /* the one policy (util.h) */
        int bad = agwrite(g, m) != 0;
        if (fclose(m) != 0) bad = 1;
        if (bad) {
            free(*data);
            *data = NULL;
            return lw_fail(err, 1, "%s: writing the DOT text failed", file);
        }
        return 0;
    }
    char *out = NULL;
    unsigned int n = 0;
    if (gvRenderData(gvc, g, fmt->gv_format, &out, &n) != 0 || !out) {
        if (out) gvFreeRenderData(out);
        return lw_fail(err, 1, "%s: Graphviz cannot render %s here%s%s", file, fmt->ext, gv_last_msg[0] ? ": " : "",
                       gv_last_msg);
    }
    *data = lw_malloc((size_t)n + 1);
    memcpy(*data, out, n);
    (*data)[n] = 0;
    *len = n;
    gvFreeRenderData(out);
    return 0;
}

int export_diagram(plan *p, export_view view, int step, const int *config_index, const char *file,
                   lw_error *err)
{
    if (export_check_path(file, err) != 0) return -1;
    /* a given strategy needs no search (nor tables) but for the reduced view, which draws the search's steps */
    if (!p || !p->cm || (!config_index && (!p->best || !p->sr))) return lw_fail(err, 1, "%s: no plan to draw", file);
    if (view != VIEW_GRAPH && view != VIEW_REDUCED && view != VIEW_STRATEGY)
        return lw_fail(err, 2, "%s: unknown view %d", file, (int)view);
    if (view == VIEW_REDUCED && !p->sr)
        return lw_fail(err, 2, "%s: the reduced view draws the search's steps: not of a given strategy", file);
    if (view == VIEW_REDUCED && plan_step_tables(p, err) != 0) return -1; /* a step's table is drawn */
    if (view == VIEW_REDUCED && (step < -1 || step > p->sr->n_steps))
        return lw_fail(err, 2, "%s: step %d: Algorithm 1 takes %d steps on this graph (-1: all)", file, step,
                       p->sr->n_steps);
    if (config_index)
        for (int i = 0; i < p->cm->n_layers; i++)
            if (config_index[i] < 0 || config_index[i] >= p->cm->n_configs[i])
                return lw_fail(err, 2, "%s: config %d of layer %s out of range", file, config_index[i],
                               p->net->layers[i].name);

    const format_info *fmt = format_for_path(file);
    if (check_sizes(p, view, step, fmt, file, err) != 0) return -1;

    diagram d = {0};
    d.p = p;
    d.m = p->cm;
    d.net = p->net;
    d.ci = config_index ? config_index : p->best;
    d.optimal = !config_index ||
                (p->sr && memcmp(config_index, p->best, sizeof(int) * (size_t)p->cm->n_layers) == 0);
    if (config_index) {
        strategy_evaluate(p->cm, config_index, &d.own_ev);
        d.ev = &d.own_ev;
    } else {
        d.ev = &p->best_eval;
    }

    agusererrf prev_errf = agseterrf(gv_capture);
    gv_last_msg[0] = 0;
    {
        lw_buf e = {0};
        d.g = agopen(dot_escaped(p->net->name, &e), Agdirected, NULL);
        lw_buf_free(&e);
    }
    if (view == VIEW_GRAPH)
        build_graph_view(&d);
    else if (view == VIEW_REDUCED)
        build_reduced_view(&d, step < 0 ? p->sr->n_steps : step);
    else if (!config_index && plan_stage_count(p) > 1)
        build_pipeline_view(&d);
    else
        build_strategy_view(&d);

    GVC_t *gvc = NULL;
    int rc = 0, laid_out = 0;
    if (fmt->gv_format) {
        /* Graphviz lays out and renders text through pango and
         * fontconfig, which crash rather than fail when memory runs out */
        lw_library_guard(file);
        gvc = gvc_get();
        if (!gvc) rc = lw_fail(err, 1, "%s: cannot start Graphviz", file);
        else if (gvLayout(gvc, d.g, "dot") != 0)
            rc = lw_fail(err, 1, "%s: Graphviz could not lay out the %s view%s%s", file, export_view_name(view),
                         gv_last_msg[0] ? ": " : "", gv_last_msg);
        else
            laid_out = 1;
    }
    char *data = NULL;
    size_t len = 0;
    if (rc == 0) rc = render_to_memory(gvc, d.g, fmt, file, &data, &len, err);
    lw_library_guard(NULL);
    if (laid_out) gvFreeLayout(gvc, d.g);
    agclose(d.g);
    agseterrf(prev_errf);
    if (rc == 0) rc = lw_write_output(file, data, len, err);
    free(data);

    free(d.sub);
    free(d.group_len);
    free(d.edge_tx);
    free(d.edge_bytes);
    lw_buf_free(&d.b);
    if (config_index) strategy_eval_free(&d.own_ev);
    return rc;
}
