/*
 * Tests of the Graphviz diagrams (src/export_dot.c): every view in every
 * format for LeNet-5, VGG-16 and Inception-v3 on 4 GPUs of p100-4x4, each
 * file checked for what its format promises (SVG: well-formed XML naming the
 * layers; PNG: signature and a real size; PDF: header and trailer; DOT: reads
 * back with agmemread with exactly the nodes and edges of the view), and
 * the failures (unknown extension, missing directory, bad step) checked to
 * leave no file behind.
 *
 * Expected counts, which the tests hold the export to exactly:
 *   graph     one node per layer (the input included), one edge per cost
 *             model edge; the title and key are the graph's label, not nodes
 *   reduced   the nodes and edges alive after K steps (search_state_at)
 *   strategy  one node (the table), no edges
 */
#include "draw_cairo.h"
#include "export_dot.h"
#include "palette.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "net_json.h"
#include "test_helpers.h"

#include <cgraph.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef LW_HAVE_LIBXML2
#include <libxml/parser.h>
#include <libxml/tree.h>
#endif

/* ---------- fixtures */

static plan *load_with(const char *net_name, int gpus, int no_fold)
{
    lw_error err = {0};
    network *net = plan_load_network(net_name, &err);
    cr_assert_not_null(net, "loading %s: %s", net_name, err.msg);
    cluster *cl = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(cl, "loading p100-4x4: %s", err.msg);
    plan_settings set = {gpus, DEFAULT_BATCH_PER_GPU, 0, no_fold};
    plan *p = plan_open(net, cl, NULL, &(plan_options){.set = set}, &err);
    cr_assert_not_null(p, "plan for %s: %s", net_name, err.msg);
    return p;
}

static plan *load(const char *net_name, int gpus)
{
    return load_with(net_name, gpus, 0);
}

static char *make_dir(void)
{
    char tmpl[] = "/tmp/lw-export-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    cr_assert_not_null(d, "mkdtemp");
    return lw_strdup(d);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = lw_malloc(n);
    snprintf(s, n, "%s/%s", dir, name);
    return s;
}

/* Number of entries in dir (besides . and ..); the names go to `names`. */
static int list_dir(const char *dir, char *names, size_t n)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "opendir %s", dir);
    int count = 0;
    if (names && n) names[0] = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        count++;
        if (names && strlen(names) + strlen(e->d_name) + 2 < n) {
            strcat(names, e->d_name);
            strcat(names, " ");
        }
    }
    closedir(d);
    return count;
}

static void remove_dir(char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char *f = join(dir, e->d_name);
            unlink(f);
            free(f);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

/* ---------- format checks */

static int entity_ok(const char *s, size_t n, size_t *i)
{
    size_t j = *i + 1;
    if (j < n && s[j] == '#') {
        j++;
        if (j < n && s[j] == 'x') j++;
        size_t k = j;
        while (j < n && ((s[j] >= '0' && s[j] <= '9') || (s[j] >= 'a' && s[j] <= 'f') || (s[j] >= 'A' && s[j] <= 'F'))) j++;
        if (j == k) return 0;
    } else {
        size_t k = j;
        while (j < n && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z'))) j++;
        if (j == k) return 0;
    }
    if (j >= n || s[j] != ';') return 0;
    *i = j;
    return 1;
}

static int name_char(char c)
{
    return c && !strchr(" \t\r\n/>=\"'<", c);
}

/* A small well-formedness check of our own (it runs whether or not libxml2
 * is there): balanced and properly nested tags, one root element, quoted
 * attributes, no stray '<' or '&'. Returns NULL or what is wrong; *root gets
 * the root element's name. */
static const char *xml_check(const char *s, size_t n, char *root, size_t rootn)
{
    enum { MAXD = 512 };
    const char *stk[MAXD];
    size_t stk_len[MAXD];
    int depth = 0, roots = 0;
    root[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '&') {
            if (!entity_ok(s, n, &i)) return "bad entity in text";
            continue;
        }
        if (s[i] != '<') {
            if (depth == 0 && !strchr(" \t\r\n", s[i])) return "text outside the root element";
            continue;
        }
        const char *end = NULL;
        if (!strncmp(s + i, "<?", 2)) {
            end = strstr(s + i, "?>");
        } else if (!strncmp(s + i, "<!--", 4)) {
            end = strstr(s + i + 4, "-->");
            if (end) end += 1;
        } else if (!strncmp(s + i, "<![CDATA[", 9)) {
            end = strstr(s + i, "]]>");
            if (end) end += 1;
        } else if (!strncmp(s + i, "<!", 2)) {
            char q = 0;
            for (size_t j = i + 2; j < n; j++) {
                if (q) {
                    if (s[j] == q) q = 0;
                } else if (s[j] == '"' || s[j] == '\'') {
                    q = s[j];
                } else if (s[j] == '>') {
                    end = s + j - 1;
                    break;
                }
            }
        } else if (s[i + 1] == '/') {
            size_t j = i + 2, k = j;
            while (j < n && name_char(s[j])) j++;
            if (depth == 0) return "closing tag without an open one";
            depth--;
            if (j - k != stk_len[depth] || strncmp(s + k, stk[depth], j - k)) return "mismatched closing tag";
            while (j < n && strchr(" \t\r\n", s[j])) j++;
            if (j >= n || s[j] != '>') return "unterminated closing tag";
            i = j;
            continue;
        } else {
            size_t j = i + 1, k = j;
            while (j < n && name_char(s[j])) j++;
            if (j == k) return "empty tag name";
            if (depth == 0) {
                if (roots++) return "two root elements";
                snprintf(root, rootn, "%.*s", (int)(j - k), s + k);
            }
            int self_close = 0;
            for (;;) {
                while (j < n && strchr(" \t\r\n", s[j])) j++;
                if (j >= n) return "unterminated start tag";
                if (s[j] == '>') break;
                if (s[j] == '/' && j + 1 < n && s[j + 1] == '>') {
                    self_close = 1;
                    j++;
                    break;
                }
                size_t a = j;
                while (j < n && name_char(s[j])) j++;
                if (j == a) return "bad attribute name";
                while (j < n && strchr(" \t\r\n", s[j])) j++;
                if (j >= n || s[j] != '=') return "attribute without a value";
                j++;
                while (j < n && strchr(" \t\r\n", s[j])) j++;
                if (j >= n || (s[j] != '"' && s[j] != '\'')) return "unquoted attribute value";
                char q = s[j++];
                for (; j < n && s[j] != q; j++) {
                    if (s[j] == '<') return "'<' in an attribute value";
                    if (s[j] == '&' && !entity_ok(s, n, &j)) return "bad entity in an attribute value";
                }
                if (j >= n) return "unterminated attribute value";
                j++;
            }
            if (!self_close) {
                if (depth == MAXD) return "nesting too deep";
                size_t len = 0; /* the name ends where name_char stops */
                while (name_char(s[k + len])) len++;
                stk[depth] = s + k;
                stk_len[depth] = len;
                depth++;
            }
            i = j;
            continue;
        }
        if (!end) return "unterminated markup";
        i = (size_t)(end - s) + 1;
    }
    if (depth) return "unclosed element";
    if (!roots) return "no root element";
    return NULL;
}

/* The file at path is well-formed XML with an <svg> root (our checker, and
 * libxml2 where it is installed); returns its text (the caller frees). */
static char *read_svg(const char *path)
{
    size_t len;
    char *s = slurp(path, &len);
    char root[64];
    const char *why = xml_check(s, len, root, sizeof root);
    cr_assert_null(why, "%s: not well-formed XML: %s", path, why);
    cr_assert_str_eq(root, "svg", "%s: root element is <%s>", path, root);
#ifdef LW_HAVE_LIBXML2
    xmlDocPtr doc = xmlReadMemory(s, (int)len, path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    cr_assert_not_null(doc, "%s: libxml2 cannot parse it", path);
    xmlNodePtr r = xmlDocGetRootElement(doc);
    cr_assert(r && !strcmp((const char *)r->name, "svg"), "%s: libxml2 finds no <svg> root", path);
    xmlFreeDoc(doc);
#endif
    return s;
}

static void check_svg(const char *path, const plan *p, export_view view, int step)
{
    char *s = read_svg(path);
    /* every layer is named: as a node's <title> where it is a node, and for
     * the reduced view's eliminated layers in the tooltip of the edge that
     * stands for them */
    const network *net = p->net;
    unsigned char *alive = NULL;
    if (view == VIEW_REDUCED) {
        alive = lw_calloc((size_t)net->n_layers, 1);
        unsigned char *ae = lw_calloc((size_t)(p->sr->n_edges_original + p->sr->n_steps + 1), 1);
        search_state_at(p->sr, step < 0 ? p->sr->n_steps : step, alive, ae);
        free(ae);
    }
    for (int i = 0; i < net->n_layers; i++) {
        const char *name = net->layers[i].name;
        char want[256];
        if (view == VIEW_STRATEGY)
            snprintf(want, sizeof want, ">%s</text>", name); /* a cell of the table */
        else if (view == VIEW_GRAPH || alive[i])
            snprintf(want, sizeof want, "<title>%s</title>", name);
        else
            snprintf(want, sizeof want, " %s", name); /* in the created edge's tooltip */
        cr_assert_not_null(strstr(s, want), "%s (%s view) does not name layer %s", path, export_view_name(view), name);
    }
    free(alive);
    free(s);
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* A PNG's signature and header; its size in pixels. */
static void png_size(const char *path, uint32_t *w, uint32_t *h)
{
    size_t len;
    char *s = slurp(path, &len);
    const unsigned char *u = (const unsigned char *)s;
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    cr_assert(len > 33, "%s: %zu bytes", path, len);
    cr_assert(memcmp(u, sig, 8) == 0, "%s: no PNG signature", path);
    cr_assert(memcmp(u + 12, "IHDR", 4) == 0, "%s: first chunk is not IHDR", path);
    *w = be32(u + 16);
    *h = be32(u + 20);
    free(s);
}

static void check_png(const char *path)
{
    uint32_t w, h;
    png_size(path, &w, &h);
    cr_assert(w > 100 && h > 100, "%s: %ux%u pixels", path, w, h);
    cr_assert(w < 40000 && h < 40000, "%s: %ux%u pixels", path, w, h);
}

static void check_pdf(const char *path)
{
    size_t len;
    char *s = slurp(path, &len);
    cr_assert(len > 100, "%s: %zu bytes", path, len);
    cr_assert(strncmp(s, "%PDF-", 5) == 0, "%s: no %%PDF- header", path);
    while (len && strchr(" \t\r\n", s[len - 1])) len--;
    cr_assert(len >= 5 && strncmp(s + len - 5, "%%EOF", 5) == 0, "%s: no %%%%EOF trailer", path);
    free(s);
}

/* Reads the DOT back; the caller agcloses it. */
static Agraph_t *read_dot(const char *path)
{
    size_t len;
    char *s = slurp(path, &len);
    Agraph_t *g = agmemread(s);
    free(s);
    cr_assert_not_null(g, "%s: agmemread failed", path);
    return g;
}

static int is_html_label(void *obj)
{
    char *l = agget(obj, (char *)"label");
    return l && *l && aghtmlstr(l);
}

/* Exactly the nodes and edges the view should have. */
static void check_dot(const char *path, const plan *p, export_view view, int step)
{
    Agraph_t *g = read_dot(path);
    const network *net = p->net;
    const cost_model *m = p->cm;
    if (view == VIEW_STRATEGY) {
        cr_assert_eq(agnnodes(g), 1, "%s: %d nodes, want the one table", path, agnnodes(g));
        cr_assert_eq(agnedges(g), 0, "%s: %d edges", path, agnedges(g));
        Agnode_t *n = agfstnode(g);
        cr_assert(is_html_label(n), "%s: the table is not an HTML-like label", path);
        char *label = agget(n, (char *)"label");
        for (int i = 0; i < net->n_layers; i++)
            cr_assert_not_null(strstr(label, net->layers[i].name), "%s: no row for %s", path, net->layers[i].name);
        for (int gpu = 0; gpu < p->gpus; gpu++) {
            char col[32];
            snprintf(col, sizeof col, ">GPU %d<", gpu);
            cr_assert_not_null(strstr(label, col), "%s: no column for GPU %d", path, gpu);
        }
        agclose(g);
        return;
    }
    unsigned char *alive_n = lw_calloc((size_t)net->n_layers, 1);
    int n_all = p->sr->n_edges_original + p->sr->n_steps;
    unsigned char *alive_e = lw_calloc((size_t)n_all + 1, 1);
    if (view == VIEW_REDUCED) {
        search_state_at(p->sr, step < 0 ? p->sr->n_steps : step, alive_n, alive_e);
    } else {
        memset(alive_n, 1, (size_t)net->n_layers);
        memset(alive_e, 1, (size_t)m->n_edges);
    }
    int want_n = 0, want_e = 0;
    for (int i = 0; i < net->n_layers; i++) want_n += alive_n[i];
    for (int e = 0; e < n_all; e++) want_e += alive_e[e];
    cr_assert_eq(agnnodes(g), want_n, "%s: %d nodes, want %d", path, agnnodes(g), want_n);
    cr_assert_eq(agnedges(g), want_e, "%s: %d edges, want %d", path, agnedges(g), want_e);
    /* the right nodes, each drawn with an HTML-like label */
    for (int i = 0; i < net->n_layers; i++) {
        Agnode_t *n = agnode(g, net->layers[i].name, 0);
        if (!alive_n[i]) {
            cr_assert_null(n, "%s: eliminated layer %s is drawn", path, net->layers[i].name);
            continue;
        }
        cr_assert_not_null(n, "%s: no node for %s", path, net->layers[i].name);
        cr_assert(is_html_label(n), "%s: node %s has no HTML-like label", path, net->layers[i].name);
    }
    /* the right edges: as many between each pair of layers as the view has */
    for (int e = 0; e < n_all; e++) {
        if (!alive_e[e]) continue;
        int a = e < m->n_edges ? m->e_from[e] : p->sr->steps[e - m->n_edges].from;
        int b = e < m->n_edges ? m->e_to[e] : p->sr->steps[e - m->n_edges].to;
        int want = 0;
        for (int f = 0; f < n_all; f++) {
            if (!alive_e[f]) continue;
            int fa = f < m->n_edges ? m->e_from[f] : p->sr->steps[f - m->n_edges].from;
            int fb = f < m->n_edges ? m->e_to[f] : p->sr->steps[f - m->n_edges].to;
            want += fa == a && fb == b;
        }
        Agnode_t *na = agnode(g, net->layers[a].name, 0), *nb = agnode(g, net->layers[b].name, 0);
        int got = 0;
        for (Agedge_t *ed = agfstout(g, na); ed; ed = agnxtout(g, ed)) got += aghead(ed) == nb;
        cr_assert_eq(got, want, "%s: %d edges %s -> %s, want %d", path, got, net->layers[a].name, net->layers[b].name,
                     want);
    }
    free(alive_n);
    free(alive_e);
    agclose(g);
}

/* Every format of one view: each file is written, checked, and nothing else
 * (no temporary) is left in the directory. */
static void check_all_formats(const char *net_name, export_view view, int step)
{
    plan *p = load(net_name, 4);
    char *dir = make_dir();
    static const char *const exts[] = {"dot", "svg", "png", "pdf"};
    for (int k = 0; k < 4; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%s.%s", export_view_name(view), net_name, exts[k]);
        char *path = join(dir, name);
        lw_error err = {0};
        int rc = export_diagram(p, view, step, NULL, path, &err);
        cr_assert_eq(rc, 0, "%s: %s", path, err.msg);
        if (k == 0) check_dot(path, p, view, step);
        if (k == 1) check_svg(path, p, view, step);
        if (k == 2) check_png(path);
        if (k == 3) check_pdf(path);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        /* written to a mkstemp file (0600) and renamed: still the usual mode */
        mode_t um = umask(0);
        umask(um);
        cr_assert_eq(st.st_mode & 0777, 0666 & ~um, "%s: mode %o", path, st.st_mode & 0777);
        free(path);
    }
    char names[1024];
    cr_assert_eq(list_dir(dir, names, sizeof names), 4, "left in the directory: %s", names);
    remove_dir(dir);
    plan_free(p);
}

/* ---------- every view, every format */

Test(export_graph, lenet5) { check_all_formats("lenet5", VIEW_GRAPH, -1); }
Test(export_graph, vgg16) { check_all_formats("vgg16", VIEW_GRAPH, -1); }
Test(export_graph, inception_v3) { check_all_formats("inception_v3", VIEW_GRAPH, -1); }
Test(export_reduced, lenet5) { check_all_formats("lenet5", VIEW_REDUCED, -1); }
Test(export_reduced, vgg16) { check_all_formats("vgg16", VIEW_REDUCED, -1); }
Test(export_reduced, inception_v3_partway) { check_all_formats("inception_v3", VIEW_REDUCED, 100); }
Test(export_strategy, lenet5) { check_all_formats("lenet5", VIEW_STRATEGY, -1); }
Test(export_strategy, vgg16) { check_all_formats("vgg16", VIEW_STRATEGY, -1); }
Test(export_strategy, inception_v3) { check_all_formats("inception_v3", VIEW_STRATEGY, -1); }

/* ---------- the reduced view */

Test(export_reduced, vgg16_final_has_exactly_the_nodes_left)
{
    plan *p = load("vgg16", 4);
    char *dir = make_dir();
    char *path = join(dir, "r.dot");
    lw_error err = {0};
    cr_assert_eq(export_diagram(p, VIEW_REDUCED, -1, NULL, path, &err), 0, "%s", err.msg);
    Agraph_t *g = read_dot(path);
    const search_result *r = p->sr;
    cr_assert_eq(agnnodes(g), r->n_left, "%d nodes, %d left", agnnodes(g), r->n_left);
    for (int i = 0; i < r->n_left; i++)
        cr_assert_not_null(agnode(g, p->net->layers[r->left[i]].name, 0), "no node %s", p->net->layers[r->left[i]].name);
    cr_assert_eq(agnedges(g), r->n_edges_left);
    /* a chain reduces to one edge made by folds (the last one folds the
     * layer before the two left), which stands for every layer folded */
    cr_assert_eq(r->n_edges_left, 1);
    Agedge_t *e = agfstout(g, agnode(g, p->net->layers[r->left[0]].name, 0));
    cr_assert_not_null(e);
    char *label = agget(e, (char *)"label");
    const elim_step *last = &r->steps[r->n_steps - 1];
    cr_assert_eq(last->kind, ELIM_FOLD);
    char want[160];
    snprintf(want, sizeof want, "fold of <B>%s</B> into %s", p->net->layers[last->node].name,
             p->net->layers[last->into].name);
    cr_assert_not_null(strstr(label, want), "label: %s", label);
    snprintf(want, sizeof want, "stands for %d layers", p->net->n_layers - r->n_left);
    cr_assert_not_null(strstr(label, want), "label: %s", label);
    cr_assert_not_null(strstr(agget(e, (char *)"style"), "dashed"));
    char *tip = agget(e, (char *)"tooltip");
    for (int i = 0; i < p->net->n_layers; i++)
        if (i != r->left[0] && i != r->left[1])
            cr_assert_not_null(strstr(tip, p->net->layers[i].name), "tooltip lacks %s", p->net->layers[i].name);
    agclose(g);
    free(path);
    remove_dir(dir);
    plan_free(p);
}

/* The paper's Algorithm 1 (search --no-fold) reduces the chain by node
 * eliminations: the edge left is the last one's, between the input and
 * the output, and stands for every layer in between. */
Test(export_reduced, vgg16_without_folds_ends_with_a_node_elimination)
{
    plan *p = load_with("vgg16", 4, 1);
    char *dir = make_dir();
    char *path = join(dir, "r.dot");
    lw_error err = {0};
    cr_assert_eq(export_diagram(p, VIEW_REDUCED, -1, NULL, path, &err), 0, "%s", err.msg);
    Agraph_t *g = read_dot(path);
    const search_result *r = p->sr;
    cr_assert(!r->fold);
    cr_assert_eq(r->n_left, 2);
    cr_assert_str_eq(p->net->layers[r->left[0]].name, "data");
    cr_assert_str_eq(p->net->layers[r->left[1]].name, "prob");
    Agedge_t *e = agfstout(g, agnode(g, "data", 0));
    cr_assert_not_null(e);
    char *label = agget(e, (char *)"label");
    char want[160];
    snprintf(want, sizeof want, "node elim of <B>%s</B>", p->net->layers[r->steps[r->n_steps - 1].node].name);
    cr_assert_not_null(strstr(label, want), "label: %s", label);
    snprintf(want, sizeof want, "stands for %d layers", p->net->n_layers - 2);
    cr_assert_not_null(strstr(label, want), "label: %s", label);
    agclose(g);
    free(path);
    remove_dir(dir);
    plan_free(p);
}

/* Step K of Algorithm 1, for every K (every `stride`-th on big graphs, and
 * the last): the drawing has exactly the nodes and edges alive after K
 * steps; step 0 is the computation graph itself. */
static void steps(const char *net_name, int stride)
{
    plan *p = load(net_name, 4);
    char *dir = make_dir();
    char *path = join(dir, "r.dot");
    int n = p->sr->n_steps;
    cr_assert_gt(n, 0);
    for (int k = 0; k <= n; k = k < n && k + stride > n ? n : k + stride) {
        lw_error err = {0};
        cr_assert_eq(export_diagram(p, VIEW_REDUCED, k, NULL, path, &err), 0, "step %d: %s", k, err.msg);
        check_dot(path, p, VIEW_REDUCED, k);
    }
    cr_assert_eq(export_diagram(p, VIEW_REDUCED, 0, NULL, path, NULL), 0);
    check_dot(path, p, VIEW_GRAPH, -1);
    free(path);
    remove_dir(dir);
    plan_free(p);
}

Test(export_reduced, lenet5_every_step) { steps("lenet5", 1); }
Test(export_reduced, vgg16_every_step) { steps("vgg16", 1); }
Test(export_reduced, inception_v3_steps) { steps("inception_v3", 7); }

Test(export_reduced, step_out_of_range_fails_and_writes_nothing)
{
    plan *p = load("lenet5", 4);
    char *dir = make_dir();
    char *path = join(dir, "r.svg");
    int bad[] = {-2, p->sr->n_steps + 1};
    for (int i = 0; i < 2; i++) {
        lw_error err = {0};
        cr_assert_eq(export_diagram(p, VIEW_REDUCED, bad[i], NULL, path, &err), -1);
        cr_assert_eq(err.code, 2);
        cr_assert_not_null(strstr(err.msg, "step"), "%s", err.msg);
    }
    cr_assert_eq(list_dir(dir, NULL, 0), 0);
    free(path);
    remove_dir(dir);
    plan_free(p);
}

/* ---------- the strategy view */

static char *strategy_label(plan *p, const int *config_index, const char *dir)
{
    char *path = join(dir, "s.dot");
    lw_error err = {0};
    cr_assert_eq(export_diagram(p, VIEW_STRATEGY, -1, config_index, path, &err), 0, "%s", err.msg);
    Agraph_t *g = read_dot(path);
    char *label = lw_strdup(agget(agfstnode(g), (char *)"label"));
    agclose(g);
    unlink(path);
    free(path);
    return label;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *q = s; (q = strstr(q, what)); q += strlen(what)) n++;
    return n;
}

/* On 16 GPUs (4 nodes): the columns are grouped under the nodes, each cell
 * is the GPU's block, and a row is marked where the layer's input crosses
 * nodes: never for data parallelism (no layer moves data), and for model
 * parallelism wherever a layer needs all channels of its input. */
Test(export_strategy, sixteen_gpus_grouped_by_node)
{
    plan *p = load("vgg16", 16);
    char *dir = make_dir();
    int n = p->net->n_layers;
    int *ci = lw_calloc((size_t)n, sizeof(int));

    strategy_baseline(p->cm, BASE_DATA, ci);
    char *label = strategy_label(p, ci, dir);
    for (int nd = 0; nd < 4; nd++) {
        char want[32];
        snprintf(want, sizeof want, "<B>node %d</B>", nd);
        cr_assert_not_null(strstr(label, want), "no header for node %d", nd);
    }
    cr_assert_eq(count(label, "COLSPAN=\"4\""), 4, "each node's header spans its 4 GPUs");
    /* batch 512 over 16 GPUs: GPU k computes samples 32k .. 32k+31 of every layer */
    for (int gpu = 0; gpu < 16; gpu++) {
        char want[64];
        snprintf(want, sizeof want, "n %d&#8211;%d<", 32 * gpu, 32 * gpu + 31);
        cr_assert_eq(count(label, want), n, "GPU %d's block %s appears %d times, want %d", gpu, want, count(label, want), n);
    }
    cr_assert_not_null(strstr(label, "across<BR/>nodes"));
    cr_assert_null(strstr(label, "#F8D3CF"), "data parallelism moves nothing, yet a row is marked");
    free(label);

    strategy_baseline(p->cm, BASE_MODEL, ci);
    label = strategy_label(p, ci, dir);
    int marked = count(label, "<TD ALIGN=\"LEFT\" BGCOLOR=\"#F8D3CF\"><B>");
    int crossing = 0;
    for (int li = 0; li < n; li++) {
        double b = 0;
        for (int e = 0; e < p->cm->n_edges; e++)
            if (p->cm->e_to[e] == li) {
                double bytes = 0;
                int a = p->cm->e_from[e];
                cost_t_x(p->cm, e, &p->cm->configs[a][ci[a]], &p->cm->configs[li][ci[li]], &bytes);
                /* all-to-all over 16 GPUs of 4 nodes: bytes moved means bytes across nodes */
                b += bytes;
            }
        crossing += b > 0;
    }
    cr_assert_gt(crossing, 0);
    cr_assert_eq(marked, crossing, "%d rows marked, %d layers receive data", marked, crossing);
    free(label);
    free(ci);
    remove_dir(dir);
    plan_free(p);
}

/* One GPU per cell and no node columns when the GPUs fit in one node. */
Test(export_strategy, four_gpus_one_node)
{
    plan *p = load("lenet5", 4);
    char *dir = make_dir();
    char *label = strategy_label(p, NULL, dir);
    cr_assert_not_null(strstr(label, "<B>node 0</B>"));
    cr_assert_null(strstr(label, "node 1"));
    cr_assert_null(strstr(label, "across"), "no inter-node column on one node");
    free(label);
    remove_dir(dir);
    plan_free(p);
}

/* ---------- the strategy shown */

Test(export_config_index, given_strategy_is_drawn)
{
    plan *p = load("vgg16", 4);
    char *dir = make_dir();
    char *path = join(dir, "g.dot");
    int n = p->net->n_layers;
    int *ci = lw_calloc((size_t)n, sizeof(int)); /* every layer on one GPU */
    lw_error err = {0};
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, ci, path, &err), 0, "%s", err.msg);
    Agraph_t *g = read_dot(path);
    cr_assert_not_null(strstr(agget(g, (char *)"label"), "given strategy"));
    for (int i = 0; i < n; i++) {
        Agnode_t *node = agnode(g, p->net->layers[i].name, 0);
        cr_assert_not_null(strstr(agget(node, (char *)"label"), "<B>1 GPU</B>"), "%s", p->net->layers[i].name);
    }
    /* one GPU: nothing moves, every edge says 0 B */
    for (Agnode_t *node = agfstnode(g); node; node = agnxtnode(g, node))
        for (Agedge_t *e = agfstout(g, node); e; e = agnxtout(g, e))
            cr_assert_not_null(strstr(agget(e, (char *)"label"), "0 B"));
    agclose(g);

    /* NULL and the optimum itself both draw the optimum */
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, p->best, path, &err), 0, "%s", err.msg);
    g = read_dot(path);
    cr_assert_not_null(strstr(agget(g, (char *)"label"), "optimal strategy"));
    agclose(g);

    ci[3] = p->cm->n_configs[3]; /* out of range */
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, ci, path, &err), -1);
    cr_assert_eq(err.code, 2);
    free(ci);
    free(path);
    remove_dir(dir);
    plan_free(p);
}

/* A pinned layer says so, and the title says the optimum is constrained. */
Test(export_config_index, pinned_layer_is_marked)
{
    plan *p = load("vgg16", 4);
    int li = net_find(p->net, "fc6");
    cr_assert_geq(li, 0);
    lw_error err = {0};
    plan_pin one_gpu = {li, 0};
    cr_assert_eq(plan_apply(p, &(plan_change){.n_pins = 1, .pins = &one_gpu}, &err), 0, "%s", err.msg);
    cr_assert_eq(p->best[li], 0);
    char *dir = make_dir();
    char *path = join(dir, "p.dot");
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, NULL, path, &err), 0, "%s", err.msg);
    Agraph_t *g = read_dot(path);
    cr_assert_not_null(strstr(agget(g, (char *)"label"), "with 1 layer pinned"));
    cr_assert_not_null(strstr(agget(agnode(g, (char *)"fc6", 0), (char *)"label"), "<B>1 GPU</B> (pinned)"));
    cr_assert_null(strstr(agget(agnode(g, (char *)"fc7", 0), (char *)"label"), "(pinned)"));
    agclose(g);
    free(path);
    remove_dir(dir);
    plan_free(p);
}

/* ---------- modules */

Test(export_graph, inception_modules_are_clusters)
{
    plan *p = load("inception_v3", 4);
    char *dir = make_dir();
    char *path = join(dir, "g.dot");
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, NULL, path, NULL), 0);
    Agraph_t *g = read_dot(path);
    Agraph_t *s = agsubg(g, (char *)"cluster_mixed_5b", 0);
    cr_assert_not_null(s, "no cluster for mixed_5b");
    int members = 0;
    for (int i = 0; i < p->net->n_layers; i++)
        if (!strncmp(p->net->layers[i].name, "mixed_5b/", 9)) {
            members++;
            cr_assert_not_null(agsubnode(s, agnode(g, p->net->layers[i].name, 0), 0), "%s not in its cluster",
                               p->net->layers[i].name);
        }
    cr_assert_eq(agnnodes(s), members);
    cr_assert_null(agsubg(g, (char *)"cluster_conv1", 0));
    agclose(g);
    free(path);
    remove_dir(dir);
    plan_free(p);
}

Test(export_graph, resnet_blocks_are_clusters)
{
    plan *p = load("resnet50", 4);
    char *dir = make_dir();
    char *path = join(dir, "g.dot");
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, NULL, path, NULL), 0);
    Agraph_t *g = read_dot(path);
    Agraph_t *s = agsubg(g, (char *)"cluster_layer2.0", 0);
    cr_assert_not_null(s, "no cluster for layer2.0");
    cr_assert_not_null(agsubnode(s, agnode(g, (char *)"layer2.0.downsample.conv", 0), 0));
    cr_assert_null(agsubnode(s, agnode(g, (char *)"layer2.1.conv1", 0), 0));
    agclose(g);
    free(path);
    remove_dir(dir);
    plan_free(p);
}

/* ---------- bad paths */

static void expect_refused(plan *p, const char *dir, const char *name, const char *must_say)
{
    char *path = join(dir, name);
    lw_error err = {0};
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, NULL, path, &err), -1, "%s was accepted", path);
    cr_assert_eq(err.code, 2, "%s: code %d", path, err.code);
    cr_assert_not_null(strstr(err.msg, path), "the message does not name the path: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, must_say), "%s: \"%s\" lacks \"%s\"", path, err.msg, must_say);
    cr_assert_eq(export_check_path(path, NULL), -1);
    free(path);
}

Test(export_paths, unknown_extension_or_missing_directory_leaves_nothing)
{
    plan *p = load("lenet5", 4);
    char *dir = make_dir();
    const char *allowed = ".dot, .gv, .svg, .png or .pdf";
    expect_refused(p, dir, "x.xyz", allowed);
    expect_refused(p, dir, "x.jpg", allowed); /* not offered: cairo here has no JPEG writer */
    expect_refused(p, dir, "x", allowed);
    expect_refused(p, dir, "x.", allowed);
    expect_refused(p, dir, ".png", allowed); /* a hidden file, not an extension */
    expect_refused(p, dir, "no-such-dir/x.svg", "does not exist");
    expect_refused(p, dir, "no-such-dir/deeper/x.png", "does not exist");
    char names[512];
    cr_assert_eq(list_dir(dir, names, sizeof names), 0, "left behind: %s", names);

    /* a directory in the way of the file */
    char *sub = join(dir, "d.svg");
    cr_assert_eq(mkdir(sub, 0755), 0);
    lw_error err = {0};
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, NULL, sub, &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert_eq(list_dir(dir, NULL, 0), 1);
    rmdir(sub);
    free(sub);

    /* a file where the directory should be */
    char *file = join(dir, "f");
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fclose(f);
    char *inside = join(file, "x.svg");
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, NULL, inside, &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert_not_null(strstr(err.msg, "not a directory"), "%s", err.msg);
    cr_assert_eq(list_dir(dir, NULL, 0), 1);
    free(inside);
    free(file);
    remove_dir(dir);
    plan_free(p);
}

/* A plan's search keeps no step tables; drawing a step of it searches
 * again keeping them (plan_step_tables), to the same steps and optimum. */
Test(export_reduced, a_step_is_drawn_from_tables_searched_again)
{
    plan *p = load("lenet5", 4);
    cr_assert(!p->sr->tables_kept);
    const search_result *lean = p->sr;
    int steps = lean->n_steps, *cfg = lw_malloc(sizeof(int) * (size_t)p->net->n_layers);
    memcpy(cfg, lean->config, sizeof(int) * (size_t)p->net->n_layers);
    double cost = lean->cost;
    lw_error err = {0};
    char *dir = make_dir();
    char *red = join(dir, "r.dot");
    cr_assert_eq(export_diagram(p, VIEW_REDUCED, 2, NULL, red, &err), 0, "%s", err.msg);
    cr_assert(p->sr->tables_kept);
    cr_assert_eq(p->sr, lean, "the plan's result stays where it was");
    cr_assert_eq(p->sr->n_steps, steps);
    cr_assert_eq(memcmp(&p->sr->cost, &cost, sizeof cost), 0);
    cr_assert_arr_eq(p->sr->config, cfg, sizeof(int) * (size_t)p->net->n_layers);
    cr_assert_eq(list_dir(dir, NULL, 0), 1);
    const search_result *kept = p->sr;
    cr_assert_eq(plan_step_tables(p, &err), 0); /* kept already: nothing to do */
    cr_assert_eq(p->sr, kept);
    free(cfg);
    free(red);
    remove_dir(dir);
    plan_free(p);
}

Test(export_paths, extension_is_case_insensitive_and_gv_is_dot)
{
    plan *p = load("lenet5", 4);
    char *dir = make_dir();
    char *svg = join(dir, "G.SVG"), *gv = join(dir, "g.gv");
    cr_assert_eq(export_diagram(p, VIEW_STRATEGY, -1, NULL, svg, NULL), 0);
    check_svg(svg, p, VIEW_STRATEGY, -1);
    cr_assert_eq(export_diagram(p, VIEW_STRATEGY, -1, NULL, gv, NULL), 0);
    check_dot(gv, p, VIEW_STRATEGY, -1);
    free(svg);
    free(gv);
    remove_dir(dir);
    plan_free(p);
}

/* A failed export leaves an existing file as it was. */
Test(export_paths, failure_keeps_the_old_file)
{
    plan *p = load("lenet5", 4);
    char *dir = make_dir();
    char *path = join(dir, "keep.svg");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("old", f);
    fclose(f);
    cr_assert_eq(export_diagram(p, VIEW_REDUCED, 999, NULL, path, NULL), -1);
    size_t len;
    char *s = slurp(path, &len);
    cr_assert_str_eq(s, "old");
    free(s);
    cr_assert_eq(list_dir(dir, NULL, 0), 1);
    free(path);
    remove_dir(dir);
    plan_free(p);
}

Test(export_views, names_round_trip)
{
    for (int v = VIEW_GRAPH; v <= VIEW_STRATEGY; v++)
        cr_assert_eq(export_view_from_name(export_view_name((export_view)v)), v);
    cr_assert_eq(export_view_from_name("graphs"), -1);
    cr_assert_eq(export_view_from_name(""), -1);
}

/* ---------- output rules (lw_write_output, used by every command) */

static char *read_all(const char *path)
{
    size_t len;
    return slurp(path, &len);
}

/* A symbolic link is written through: the file it points at gets the data,
 * the link stays a link; a dangling link creates the file it names. */
Test(output, symlink_is_written_through)
{
    char *dir = make_dir();
    char *target = join(dir, "target.json"), *link = join(dir, "link.json");
    FILE *f = fopen(target, "w");
    cr_assert_not_null(f);
    fputs("old", f);
    fclose(f);
    cr_assert_eq(chmod(target, 0600), 0);
    cr_assert_eq(symlink("target.json", link), 0);
    lw_error err = {0};
    cr_assert_eq(lw_write_output(link, "new\n", 4, &err), 0, "%s", err.msg);
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link was replaced");
    char *s = read_all(target);
    cr_assert_str_eq(s, "new\n");
    free(s);
    cr_assert_eq(stat(target, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "the replaced file's mode was not kept: %o", st.st_mode & 0777);

    /* dangling, through a second link */
    char *l2 = join(dir, "l2.json"), *made = join(dir, "made.json");
    cr_assert_eq(symlink("l3.json", l2), 0);
    char *l3 = join(dir, "l3.json");
    cr_assert_eq(symlink(made, l3), 0);
    cr_assert_eq(lw_write_output(l2, "x", 1, &err), 0, "%s", err.msg);
    cr_assert_eq(lstat(l2, &st), 0);
    cr_assert(S_ISLNK(st.st_mode));
    s = read_all(made);
    cr_assert_str_eq(s, "x");
    free(s);
    cr_assert_eq(list_dir(dir, NULL, 0), 5, "a temporary was left");

    /* a loop is refused */
    char *la = join(dir, "la"), *lb = join(dir, "lb");
    cr_assert_eq(symlink("lb", la), 0);
    cr_assert_eq(symlink("la", lb), 0);
    cr_assert_eq(lw_write_output(la, "x", 1, &err), -1);
    cr_assert_not_null(strstr(err.msg, la), "%s", err.msg);
    free(la);
    free(lb);
    free(l2);
    free(l3);
    free(made);
    free(target);
    free(link);
    remove_dir(dir);
}

/* A FIFO is written in place, never replaced by a regular file. */
Test(output, fifo_is_written_in_place)
{
    char *dir = make_dir();
    char *fifo = join(dir, "out.fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        /* the reader: copies what arrives to the pipe */
        int in = open(fifo, O_RDONLY);
        char buf[64];
        ssize_t n = in >= 0 ? read(in, buf, sizeof buf) : -1;
        if (n > 0 && write(fds[1], buf, (size_t)n) != n) _exit(2);
        _exit(n > 0 ? 0 : 1);
    }
    close(fds[1]);
    lw_error err = {0};
    cr_assert_eq(lw_write_output(fifo, "through", 7, &err), 0, "%s", err.msg);
    char got[16] = {0};
    cr_assert_eq(read(fds[0], got, sizeof got - 1), 7);
    cr_assert_str_eq(got, "through");
    int status;
    waitpid(pid, &status, 0);
    close(fds[0]);
    struct stat st;
    cr_assert_eq(lstat(fifo, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");
    cr_assert_eq(list_dir(dir, NULL, 0), 1);
    free(fifo);
    remove_dir(dir);
}

/* A directory, a socket or an empty name is refused with code 2 before anything is written. */
Test(output, directory_and_empty_name_are_refused)
{
    char *dir = make_dir();
    lw_error err = {0};
    cr_assert_eq(lw_check_output(dir, &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert_not_null(strstr(err.msg, "directory"), "%s", err.msg);
    cr_assert_eq(lw_write_output(dir, "x", 1, &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert_eq(lw_check_output("", &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert_eq(lw_write_output("", "x", 1, &err), -1);
    cr_assert_eq(err.code, 2);
    char *missing = join(dir, "none/x.json");
    cr_assert_eq(lw_check_output(missing, &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert_not_null(strstr(err.msg, missing), "%s", err.msg);
    cr_assert_eq(list_dir(dir, NULL, 0), 0);
    free(missing);
    remove_dir(dir);
}

/* A descriptor of the process, by any of its names (or a link to one), is
 * written through at its offset: a file opened for append keeps what it
 * had and is not replaced (issue 31). */
Test(output, descriptor_names_write_through_in_place)
{
    char *dir = make_dir();
    char *log = join(dir, "log.txt");
    char *link = join(dir, "to-fd.json");
    FILE *f = fopen(log, "w");
    fputs("earlier\n", f);
    fclose(f);
    struct stat before, after;
    cr_assert_eq(stat(log, &before), 0);
    int fd = open(log, O_WRONLY | O_APPEND);
    cr_assert_geq(fd, 0);
    char names[3][64];
    snprintf(names[0], sizeof names[0], "/dev/fd/%d", fd);
    snprintf(names[1], sizeof names[1], "/proc/self/fd/%d", fd);
    snprintf(names[2], sizeof names[2], "/proc/%d/fd/%d", (int)getpid(), fd);
    lw_error err = {0};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(lw_check_output(names[i], &err), 0, "%s: %s", names[i], err.msg);
        cr_assert_eq(lw_write_output(names[i], "x\n", 2, &err), 0, "%s: %s", names[i], err.msg);
    }
    cr_assert_eq(symlink(names[1], link), 0);
    cr_assert_eq(lw_write_output(link, "y\n", 2, &err), 0, "%s", err.msg);
    close(fd);
    char *s = read_all(log);
    cr_assert_str_eq(s, "earlier\nx\nx\nx\ny\n");
    free(s);
    cr_assert_eq(stat(log, &after), 0);
    cr_assert_eq(after.st_ino, before.st_ino, "the file was replaced");
    /* the same names once the descriptor is closed: refused, code 2 */
    cr_assert_eq(lw_write_output(names[0], "z", 1, &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert_eq(list_dir(dir, NULL, 0), 2);
    free(log);
    free(link);
    remove_dir(dir);
}

/* A file with two names is not split by a rename: refused, both kept. */
Test(output, hard_linked_file_is_refused)
{
    char *dir = make_dir();
    char *a = join(dir, "a.json"), *b = join(dir, "b.json");
    FILE *f = fopen(a, "w");
    fputs("old", f);
    fclose(f);
    cr_assert_eq(link(a, b), 0);
    lw_error err = {0};
    cr_assert_eq(lw_check_output(a, &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert_not_null(strstr(err.msg, "hard links"), "%s", err.msg);
    cr_assert_eq(lw_write_output(b, "new", 3, &err), -1);
    char *s = read_all(a);
    cr_assert_str_eq(s, "old");
    free(s);
    cr_assert_eq(list_dir(dir, NULL, 0), 2);
    free(a);
    free(b);
    remove_dir(dir);
}

/* Two names of one file, there or not yet, have one identity; a terminal
 * or /dev/null never counts as the same file. */
Test(output, file_ids_tell_one_file_from_two)
{
    char *dir = make_dir();
    char *a = join(dir, "a.json"), *link = join(dir, "l.json"), *other = join(dir, "b.json");
    cr_assert_eq(symlink("a.json", link), 0);
    lw_file_id x, y;
    /* not there yet: the link and the name agree, another name does not */
    cr_assert_eq(lw_output_id(a, &x), 0);
    cr_assert_eq(lw_output_id(link, &y), 0);
    cr_assert(lw_same_file(&x, &y));
    cr_assert_eq(lw_output_id(other, &y), 0);
    cr_assert_not(lw_same_file(&x, &y));
    FILE *f = fopen(a, "w");
    fclose(f);
    cr_assert_eq(lw_output_id(link, &x), 0);
    cr_assert_eq(lw_input_id(a, &y), 0);
    cr_assert(lw_same_file(&x, &y));
    cr_assert_eq(lw_input_id(other, &y), -1);
    cr_assert_eq(lw_output_id("/dev/null", &x), 0);
    cr_assert_eq(lw_input_id("/dev/null", &y), 0);
    cr_assert_not(lw_same_file(&x, &y));
    free(a);
    free(link);
    free(other);
    remove_dir(dir);
}

/* Under nohup SIGHUP is ignored: a SIGHUP during the write must not remove
 * the temporary (the write then failed with "cannot rename into place"). */
static void hup_now(const char *tmp)
{
    (void)tmp;
    raise(SIGHUP);
}

Test(output, ignored_sighup_keeps_the_temporary)
{
    char *dir = make_dir();
    char *path = join(dir, "out.json");
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGHUP, &ign, &old);
    lw__temp_created_hook = hup_now;
    lw_error err = {0};
    int rc = lw_write_output(path, "data", 4, &err);
    lw__temp_created_hook = NULL;
    struct sigaction after;
    sigaction(SIGHUP, NULL, &after);
    sigaction(SIGHUP, &old, NULL);
    cr_assert_eq(rc, 0, "%s", err.msg);
    cr_assert_eq(after.sa_handler, SIG_IGN, "SIGHUP is no longer ignored");
    char *s = read_all(path);
    cr_assert_str_eq(s, "data");
    free(s);
    cr_assert_eq(list_dir(dir, NULL, 0), 1);
    free(path);
    remove_dir(dir);
}

/* Graphviz crashes on graphs far past what it can lay out (about 18 000
 * layers, inside mincross): the size is checked before anything is built,
 * and the limit is named. DOT text needs no layout and is still written. */
Test(output, graph_too_big_to_lay_out_is_refused_with_the_limit)
{
    int n = 5001;
    lw_buf b = {0};
    lw_buf_printf(&b, "{\"format\": \"layerwise-net/1\", \"name\": \"chain\", \"input\": {\"name\": \"data\", "
                      "\"channels\": 2, \"height\": 2, \"width\": 2}, \"layers\": [");
    lw_buf_printf(&b, "{\"name\": \"r0\", \"type\": \"relu\", \"inputs\": [\"data\"]}");
    for (int i = 1; i < n; i++)
        lw_buf_printf(&b, ", {\"name\": \"r%d\", \"type\": \"relu\", \"inputs\": [\"r%d\"]}", i, i - 1);
    lw_buf_printf(&b, "]}");
    lw_error err = {0};
    network *net = net_from_json(b.s, b.len, "chain.json", &err);
    lw_buf_free(&b);
    cr_assert_not_null(net, "%s", err.msg);
    cluster *cl = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(cl, "%s", err.msg);
    plan_settings set = {1, DEFAULT_BATCH_PER_GPU, 0, 0};
    plan *p = plan_open(net, cl, NULL, &(plan_options){.set = set}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    char *dir = make_dir();
    char *svg = join(dir, "big.svg"), *dot = join(dir, "big.dot");
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, NULL, svg, &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert_not_null(strstr(err.msg, "5000"), "the limit is not named: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, svg), "%s", err.msg);
    cr_assert_eq(list_dir(dir, NULL, 0), 0);
    cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, NULL, dot, &err), 0, "%s", err.msg);
    cr_assert_eq(list_dir(dir, NULL, 0), 1);
    free(svg);
    free(dot);
    remove_dir(dir);
    plan_free(p);
}

/* Names that are legal but hostile to the formats (a trailing backslash, a
 * backslash before a quote, quotes, markup, escString sequences, wide
 * characters, the longest name allowed) give DOT that parses with every
 * node and edge, and well-formed SVG; backslash-N in a tooltip is not
 * expanded. */
Test(export_names, hostile_names_give_well_formed_files)
{
    char longname[LW_NAME_MAX + 1];
    memset(longname, 'N', LW_NAME_MAX);
    longname[LW_NAME_MAX] = 0;
    const char *names[] = {"a\\\\", "x\\\"y", "q\\\\\\\"r", "<b>&amp;</b>", "t\\\\N\\\\n", "\xc3\xa9\xe6\xbc\xa2\xe5\xad\x97", longname};
    int n = (int)(sizeof names / sizeof names[0]);
    lw_buf b = {0};
    lw_buf_printf(&b, "{\"format\": \"layerwise-net/1\", \"name\": \"w\\\\\\\"%.190s\", \"input\": {\"name\": \"in\\\\\", "
                      "\"channels\": 4, \"height\": 4, \"width\": 4}, \"layers\": [",
                  longname);
    for (int i = 0; i < n; i++)
        lw_buf_printf(&b, "%s{\"name\": \"%s\", \"type\": \"relu\", \"inputs\": [\"%s\"]}", i ? ", " : "", names[i],
                      i ? names[i - 1] : "in\\\\");
    lw_buf_printf(&b, "]}");
    lw_error err = {0};
    network *net = net_from_json(b.s, b.len, "hostile.json", &err);
    lw_buf_free(&b);
    cr_assert_not_null(net, "%s", err.msg);
    cluster *cl = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(cl, "%s", err.msg);
    plan_settings set = {4, DEFAULT_BATCH_PER_GPU, 0, 0};
    plan *p = plan_open(net, cl, NULL, &(plan_options){.set = set}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    char *dir = make_dir();
    for (int v = VIEW_GRAPH; v <= VIEW_STRATEGY; v++) {
        char *dot = join(dir, "h.dot"), *svg = join(dir, "h.svg");
        cr_assert_eq(export_diagram(p, (export_view)v, -1, NULL, dot, &err), 0, "%s", err.msg);
        Agraph_t *g = read_dot(dot);
        cr_assert_eq(agnnodes(g), v == VIEW_STRATEGY ? 1 : v == VIEW_GRAPH ? n + 1 : p->sr->n_left, "view %d", v);
        if (v == VIEW_GRAPH) {
            cr_assert_eq(agnedges(g), n, "view %d: %d edges", v, agnedges(g));
            /* the tooltip reads back with the name as it is after escString */
            for (Agnode_t *nd = agfstnode(g); nd; nd = agnxtnode(g, nd)) {
                char *tip = agget(nd, (char *)"tooltip");
                cr_assert_not_null(tip);
            }
        }
        agclose(g);
        cr_assert_eq(export_diagram(p, (export_view)v, -1, NULL, svg, &err), 0, "%s", err.msg);
        size_t len;
        char *text = slurp(svg, &len);
        char root[64];
        const char *why = xml_check(text, len, root, sizeof root);
        cr_assert_null(why, "view %d: not well-formed XML: %s", v, why);
#ifdef LW_HAVE_LIBXML2
        xmlDocPtr doc = xmlReadMemory(text, (int)len, svg, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        cr_assert_not_null(doc, "view %d: libxml2 cannot parse it", v);
        xmlFreeDoc(doc);
#endif
        /* names appear as they are (markup escaped), escString sequences not expanded */
        if (v != VIEW_REDUCED) /* there, eliminated layers are named in tooltips only */
            cr_assert_not_null(strstr(text, "&lt;b&gt;&amp;amp;&lt;/b&gt;"), "view %d: markup name missing", v);
        if (v == VIEW_GRAPH) cr_assert_not_null(strstr(text, "t\\N\\n:"), "view %d: the escString was expanded", v);
        free(text);
        free(dot);
        free(svg);
    }
    remove_dir(dir);
    plan_free(p);
}

/* ---------- cairo drawings (src/draw_cairo.c): the simulated step, bar charts */

/* SVG: parses, its size is the drawing's, and each colour named appears at
 * least twice (its legend swatch and a box); PNG: its size in pixels; PDF:
 * header and trailer. */
static void check_drawing(const char *dir, const char *base, double w, double h, const char *const *colours,
                          int n_colours, int (*draw)(const char *path, const void *user, lw_error *err),
                          const void *user)
{
    static const char *const exts[] = {"svg", "png", "pdf", "SVG"};
    for (int k = 0; k < 4; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s.%s", base, exts[k]);
        char *path = join(dir, name);
        lw_error err = {0};
        cr_assert_eq(draw(path, user, &err), 0, "%s: %s", path, err.msg);
        if (k == 0 || k == 3) {
            char *s = read_svg(path);
            char want[128];
            snprintf(want, sizeof want, "width=\"%gpt\" height=\"%gpt\"", w, h);
            cr_assert_not_null(strstr(s, want), "%s lacks %s", path, want);
            for (int c = 0; c < n_colours; c++) {
                const char *at = strstr(s, colours[c]);
                cr_assert(at && strstr(at + 1, colours[c]), "%s: colour %s not drawn twice", path, colours[c]);
            }
            free(s);
        } else if (k == 1) {
            uint32_t pw, ph;
            png_size(path, &pw, &ph);
            cr_assert(pw == (uint32_t)ceil(w) && ph == (uint32_t)ceil(h), "%s: %ux%u pixels, want %gx%g", path, pw, ph,
                      w, h);
        } else {
            check_pdf(path);
        }
        free(path);
    }
    cr_assert_eq(list_dir(dir, NULL, 0), 4, "a temporary was left");
}

typedef struct step_drawing {
    const sim_result *s;
    const cost_model *m;
} step_drawing;

static int draw_step(const char *path, const void *user, lw_error *err)
{
    const step_drawing *d = user;
    return draw_sim_step(d->s, d->m, "optimum", path, err);
}

/* fill colours of forward, input gradient, weight gradient, transfer, sync, all-gather, reduce-scatter,
 * reduce (of partial sums), optimizer */
/* A fraction as cairo's SVG writes it: a percentage, six decimals, trailing zeros dropped. */
static void cairo_percent(char *out, size_t n, double v)
{
    snprintf(out, n, "%f", v * 100);
    char *e = out + strlen(out);
    while (e > out && e[-1] == '0') *--e = 0;
    if (e > out && e[-1] == '.') e[-1] = 0;
}

/* The SVG fill of each task kind: the palette's colour (palette.h
 * sim_kind_colours, which the Timeline's screen shares), as cairo writes it. */
static char kind_fill_text[SIM__KINDS][64];
static const char *kind_fill[SIM__KINDS];
static void kind_fills(void)
{
    for (int k = 0; k < SIM__KINDS; k++) {
        unsigned c[3];
        cr_assert_eq(sscanf(sim_kind_colours[k].fill, "#%2x%2x%2x", &c[0], &c[1], &c[2]), 3);
        char p[3][16];
        for (int i = 0; i < 3; i++) cairo_percent(p[i], sizeof p[i], c[i] / 255.0);
        snprintf(kind_fill_text[k], sizeof kind_fill_text[k], "fill:rgb(%s%%,%s%%,%s%%)", p[0], p[1], p[2]);
        kind_fill[k] = kind_fill_text[k];
    }
}

Test(draw_cairo, simulated_step_in_every_format)
{
    plan *p = load("vgg16", 4);
    sim_options ddp = {.overlap = SIM_OVERLAP_DDP}; /* every kind, the optimizer step too */
    sim_result *s = sim_run(p->cm, p->best, &ddp);
    int kinds[SIM__KINDS] = {0};
    for (int k = 0; k < s->n_tasks; k++) kinds[s->tasks[k].kind] += s->tasks[k].dur_ms > 0;
    /* the kinds of a replicated scheme (the sharded schemes' collectives: test_sharding) */
    for (int k = 0; k <= SIM_SYNC; k++) cr_assert(kinds[k] > 0, "VGG-16 on 4 GPUs has no %s task", sim_kind_name((sim_kind)k));
    double w, h;
    draw_sim_step_size(s, &w, &h);
    /* a row per GPU and per link or NIC used: 4 GPUs and 12 links at 16 points */
    cr_assert_eq(w, 1400);
    int used = 0;
    for (int r = 0; r < s->n_res; r++) used += s->res[r].busy_ms > 0 || s->res[r].kind == SIM_RES_GPU;
    cr_assert_eq(h, 78 + 16 * used + 44, "height %g for %d rows", h, used);
    char *dir = make_dir();
    step_drawing d = {s, p->cm};
    kind_fills();
    check_drawing(dir, "step", w, h, kind_fill, SIM_SYNC + 1, draw_step, &d);
    remove_dir(dir);
    sim_free(s);
    plan_free(p);
}

/* Under zero3 (FSDP) the step has all-gathers and reduce-scatters, drawn
 * in their own colours (legend and tasks), with every other kind but the
 * bucketed sync. */
Test(draw_cairo, sharded_step_draws_gathers_and_scatters)
{
    plan *p = load("vgg16", 4);
    lw_error err = {0};
    cr_assert_eq(plan_apply(p, &(plan_change){.sync_set = 1, .sync = SYNC_ZERO3}, &err), 0, "%s", err.msg);
    int data[64];
    strategy_baseline(p->cm, BASE_DATA, data);
    sim_result *s = sim_run(p->cm, data, NULL);
    int kinds[SIM__KINDS] = {0};
    for (int k = 0; k < s->n_tasks; k++) kinds[s->tasks[k].kind] += s->tasks[k].dur_ms > 0;
    cr_assert(kinds[SIM_ALLGATHER] > 0 && kinds[SIM_REDUCE_SCATTER] > 0 && kinds[SIM_SYNC] == 0);
    double w, h;
    draw_sim_step_size(s, &w, &h);
    char *dir = make_dir();
    step_drawing d = {s, p->cm};
    kind_fills();
    const char *fills[] = {kind_fill[SIM_FORWARD], kind_fill[SIM_ALLGATHER], kind_fill[SIM_REDUCE_SCATTER]};
    check_drawing(dir, "zstep", w, h, fills, 3, draw_step, &d);
    remove_dir(dir);
    sim_free(s);
    plan_free(p);
}

/* A transformer's step with partial sums and replicas (every layer that
 * allows r or x on 4 GPUs with degree 4): its reduce tasks drawn in their
 * own colour. */
Test(draw_cairo, reduce_tasks_in_their_colour)
{
    plan *p = load("tests/fixtures/nets/tiny_gpt.json", 4);
    int *ci = lw_malloc(sizeof(int) * (size_t)p->net->n_layers);
    int reduces = 0;
    for (int i = 0; i < p->net->n_layers; i++) {
        ci[i] = 0;
        for (int k = 0; k < p->cm->n_configs[i]; k++) {
            const config *q = &p->cm->configs[i][k];
            if (q->deg[DIM_R] == 4 || q->deg[DIM_X] == 4 || (ci[i] == 0 && q->deg[DIM_N] == 4)) ci[i] = k;
        }
    }
    sim_result *s = sim_run(p->cm, ci, NULL);
    for (int k = 0; k < s->n_tasks; k++) reduces += s->tasks[k].kind == SIM_REDUCE && s->tasks[k].dur_ms > 0;
    cr_assert(reduces > 0, "no reduce task");
    double w, h;
    draw_sim_step_size(s, &w, &h);
    char *dir = make_dir();
    step_drawing d = {s, p->cm};
    kind_fills();
    check_drawing(dir, "step", w, h, kind_fill + SIM_REDUCE, 1, draw_step, &d);
    remove_dir(dir);
    sim_free(s);
    free(ci);
    plan_free(p);
}

/* A model-parallel step of tens of thousands of pieces: narrow boxes of a
 * kind within 2 points of each other are drawn as one (one shape per task
 * would be over 52 000 here; merged, under 30 000). */
Test(draw_cairo, many_tasks_stay_a_small_file)
{
    plan *p = load("inception_v3", 16);
    int *ci = lw_malloc(sizeof(int) * (size_t)p->net->n_layers);
    strategy_baseline(p->cm, BASE_MODEL, ci);
    sim_result *s = sim_run(p->cm, ci, NULL);
    cr_assert(s->n_tasks > 20000, "%d tasks", s->n_tasks);
    char *dir = make_dir();
    char *path = join(dir, "model.svg");
    lw_error err = {0};
    cr_assert_eq(draw_sim_step(s, p->cm, "model", path, &err), 0, "%s", err.msg);
    char *text = read_svg(path);
    size_t boxes = 0;
    for (const char *c = text; (c = strstr(c, "<path")); c++) boxes++;
    cr_assert(boxes < (size_t)s->n_tasks * 7 / 10, "%zu shapes for %d tasks", boxes, s->n_tasks);
    free(text);
    free(path);
    remove_dir(dir);
    sim_free(s);
    free(ci);
    plan_free(p);
}

static const char *const series_fill[4] = {"fill:rgb(30%,47%,66%)", "fill:rgb(96%,52%,9%)", "fill:rgb(33%,64%,29%)",
                                           "fill:rgb(89%,34%,34%)"};

static int draw_chart(const char *path, const void *user, lw_error *err)
{
    const draw_bars *panels = user;
    return draw_bar_charts("scaling", panels, 2, path, err);
}

Test(draw_cairo, bar_charts_in_every_format)
{
    static const char *const groups[3] = {"1 GPU", "2 GPUs", "4 GPUs"};
    static const char *const series[4] = {"data", "model", "OWT", "layer-wise"};
    double v[24];
    for (int i = 0; i < 24; i++) v[i] = 100.0 * (i + 1);
    v[5] = NAN; /* a missing bar is left out, the rest drawn */
    draw_bars panels[2] = {{"images/s (Eq. 1)", 0, 0, 3, groups, 4, series, v},
                           {"bytes per step", 1, 1, 3, groups, 4, series, v + 12}};
    double w, h;
    draw_bar_charts_size(2, &w, &h);
    cr_assert(w > 500 && h > 500);
    char *dir = make_dir();
    check_drawing(dir, "chart", w, h, series_fill, 4, draw_chart, panels);
    remove_dir(dir);
}

/* A bad path or a failed drawing writes nothing and keeps an existing file. */
Test(draw_cairo, bad_paths_leave_nothing)
{
    plan *p = load("lenet5", 2);
    sim_result *s = sim_run(p->cm, p->best, NULL);
    char *dir = make_dir();
    static const char *const bad[] = {"x.dot", "x.jpg", "x", ".png", "no-such-dir/x.svg"};
    static const char *const says[] = {".svg, .png or .pdf", ".svg, .png or .pdf", "no file extension",
                                       "no file extension", "does not exist"};
    for (int i = 0; i < 5; i++) {
        char *path = join(dir, bad[i]);
        lw_error err = {0};
        cr_assert_eq(draw_sim_step(s, p->cm, "optimum", path, &err), -1, "%s was accepted", path);
        cr_assert_eq(err.code, 2, "%s: code %d", path, err.code);
        cr_assert(strstr(err.msg, path) && strstr(err.msg, says[i]), "%s: %s", path, err.msg);
        cr_assert_eq(draw_check_path(path, NULL), -1);
        free(path);
    }
    char *sub = join(dir, "d.png");
    cr_assert_eq(mkdir(sub, 0755), 0);
    cr_assert_eq(draw_sim_step(s, p->cm, "optimum", sub, NULL), -1);
    rmdir(sub);
    free(sub);
    cr_assert_eq(list_dir(dir, NULL, 0), 0, "left behind");
    /* a chart that cannot be drawn (nine series) keeps the old file */
    char *keep = join(dir, "keep.pdf");
    FILE *f = fopen(keep, "w");
    cr_assert_not_null(f);
    fputs("old", f);
    fclose(f);
    double v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    draw_bars nine = {"nine", 0, 0, 1, NULL, 9, NULL, v};
    lw_error err = {0};
    cr_assert_eq(draw_bar_charts("t", &nine, 1, keep, &err), -1);
    cr_assert_not_null(strstr(err.msg, keep), "%s", err.msg);
    char *old = read_all(keep);
    cr_assert_str_eq(old, "old");
    free(old);
    cr_assert_eq(list_dir(dir, NULL, 0), 1);
    free(keep);
    remove_dir(dir);
    sim_free(s);
    plan_free(p);
}

/* A pipelined plan's strategy view (issue 35): a cluster per stage
 * (subgraph cluster_stageN) labelled with its GPUs and t_i, each stage's
 * layers inside it, an edge from each stage to the next. */
Test(export_strategy, pipeline_stages_as_clusters)
{
    lw_error err = {0};
    network *net = plan_load_network("tests/fixtures/nets/tiny_gpt.json", &err);
    cr_assert_not_null(net, "%s", err.msg);
    cluster *cl = plan_load_cluster("dgx-a100", &err);
    cr_assert_not_null(cl, "%s", err.msg);
    plan *p = plan_open(net, cl, NULL,
                        &(plan_options){.set = {.gpus = 8}, .pipe = {.stages = 2, .microbatches = 4}}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_eq(plan_stage_count(p), 2);
    char *dir = make_dir(), *path = join(dir, "pipe.dot");
    cr_assert_eq(export_diagram(p, VIEW_STRATEGY, -1, NULL, path, &err), 0, "%s", err.msg);
    size_t len;
    char *text = lw_read_file(path, &len, &err);
    cr_assert_not_null(text, "%s", err.msg);
    for (int i = 0; i < 2; i++) {
        plan_stage_summary s;
        plan_stage_info(p, i, &s);
        char want[160];
        snprintf(want, sizeof want, "subgraph cluster_stage%d", i + 1);
        const char *at = strstr(text, want);
        cr_assert(at, "no %s in:\n%s", want, text);
        /* the cluster's block: up to the next cluster (Graphviz writes them in no set order) */
        const char *next = strstr(at + 1, "subgraph cluster_");
        if (!next) next = text + len;
        snprintf(want, sizeof want, "stage %d: GPUs %d-%d, t%d = ", i + 1, s.gpu0, s.gpu0 + s.gpus - 1, i + 1);
        const char *lab = strstr(at, want);
        cr_assert(lab && lab < next, "no label \"%s\" in its cluster:\n%s", want, text);
        /* the stage's first and last layers sit inside its cluster */
        const char *first = p->net->layers[s.first].name, *last = p->net->layers[s.last - 1].name;
        const char *f = strstr(at, first), *l = strstr(at, last);
        cr_assert(f && f < next && l && l < next, "stage %d's layers %s..%s not in its cluster", i + 1, first, last);
    }
    cr_assert(strstr(text, "stage1 -> stage2"), "no edge between the stages:\n%s", text);
    cr_assert(strstr(text, "pipeline of 2 stages x 4 micro-batches (1f1b)"), "title:\n%s", text);
    free(text);
    /* SVG renders it */
    char *svg = join(dir, "pipe.svg");
    cr_assert_eq(export_diagram(p, VIEW_STRATEGY, -1, NULL, svg, &err), 0, "%s", err.msg);
    unlink(svg);
    unlink(path);
    rmdir(dir);
    free(svg);
    free(path);
    free(dir);
    plan_free(p);
}
