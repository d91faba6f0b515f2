#include "draw_cairo.h"
#include "palette.h"
#include "pipeline.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- formats and output ---------- */

typedef enum { FMT_NONE, FMT_SVG, FMT_PNG, FMT_PDF } draw_format;

const char *draw_formats_help(void) { return ".svg, .png or .pdf"; }

static draw_format format_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base || !dot[1]) return FMT_NONE;
    char ext[8];
    size_t n = strlen(dot + 1);
    if (n >= sizeof ext) return FMT_NONE;
    for (size_t i = 0; i <= n; i++) ext[i] = (char)tolower((unsigned char)dot[1 + i]);
    if (!strcmp(ext, "svg")) return FMT_SVG;
    if (!strcmp(ext, "png")) return FMT_PNG;
    if (!strcmp(ext, "pdf")) return FMT_PDF;
    return FMT_NONE;
}

int draw_format_known(const char *path) { return path && format_of(path) != FMT_NONE; }

int draw_check_path(const char *path, lw_error *err)
{
    if (!path || !*path) return lw_fail(err, 2, "no output file given; use %s", draw_formats_help());
    if (format_of(path) == FMT_NONE) {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        const char *dot = strrchr(base, '.');
        if (dot && dot != base && dot[1])
            return lw_fail(err, 2, "%s: cannot draw as \"%s\"; use %s", path, dot, draw_formats_help());
        return lw_fail(err, 2, "%s: no file extension to choose the format by; use %s", path, draw_formats_help());
    }
    return lw_check_output(path, err);
}

/* cairo's stream surfaces write here */
static cairo_status_t to_buf(void *closure, const unsigned char *data, unsigned int len)
{
    lw_buf *b = closure;
    lw_buf_append(b, (const char *)data, len);
    return CAIRO_STATUS_SUCCESS;
}

typedef void (*paint_fn)(cairo_t *cr, const void *user);

/* Renders paint() on a w x h drawing in path's format and writes it. */
static int render(const char *path, double w, double h, paint_fn paint, const void *user, lw_error *err)
{
    if (draw_check_path(path, err) != 0) return -1;
    draw_format f = format_of(path);
    /* cairo's text loads fonts through fontconfig, which crashes rather
     * than fail when memory runs out (util.h) */
    lw_library_guard(path);
    lw_buf b = {0};
    cairo_surface_t *s;
    if (f == FMT_SVG) s = cairo_svg_surface_create_for_stream(to_buf, &b, w, h);
    else if (f == FMT_PDF) s = cairo_pdf_surface_create_for_stream(to_buf, &b, w, h);
    else s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(w), (int)ceil(h));
    cairo_status_t st = cairo_surface_status(s);
    if (st == CAIRO_STATUS_SUCCESS) {
        cairo_t *cr = cairo_create(s);
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_paint(cr);
        paint(cr, user);
        st = cairo_status(cr);
        cairo_destroy(cr);
        if (st == CAIRO_STATUS_SUCCESS && f == FMT_PNG) st = cairo_surface_write_to_png_stream(s, to_buf, &b);
        cairo_surface_finish(s);
        if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(s);
    }
    cairo_surface_destroy(s);
    lw_library_guard(NULL);
    int rc;
    if (st != CAIRO_STATUS_SUCCESS) rc = lw_fail(err, 1, "%s: drawing failed: %s", path, cairo_status_to_string(st));
    else rc = lw_write_output(path, b.s ? b.s : "", b.len, err);
    lw_buf_free(&b);
    return rc;
}

/* ---------- small drawing helpers ---------- */

typedef struct rgb {
    double r, g, b;
} rgb;

static void set_rgb(cairo_t *cr, rgb c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }

static const rgb INK = {0.13, 0.13, 0.13}, GREY = {0.45, 0.45, 0.45}, RULE = {0.85, 0.85, 0.85};

static void font(cairo_t *cr, double size, int bold)
{
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

/* Text with its baseline at y; align 0 left, 1 centred, 2 right of x. */
static double text_width(cairo_t *cr, const char *s);

/* A format character (U+202E, ...) is drawn escaped, never raw (util.h). */
static double text(cairo_t *cr, double x, double y, int align, const char *s)
{
    if (lw_text_has_format(s)) {
        lw_buf b = {0};
        lw_text_shown(&b, s);
        double wd = text(cr, x, y, align, b.s);
        lw_buf_free(&b);
        return wd;
    }
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, align == 0 ? x : align == 1 ? x - e.x_advance / 2 : x - e.x_advance, y);
    cairo_show_text(cr, s);
    return e.x_advance;
}

static double text_width(cairo_t *cr, const char *s)
{
    if (lw_text_has_format(s)) {
        lw_buf b = {0};
        lw_text_shown(&b, s);
        double wd = text_width(cr, b.s);
        lw_buf_free(&b);
        return wd;
    }
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.x_advance;
}

static void line(cairo_t *cr, double x0, double y0, double x1, double y1, rgb c, double width)
{
    set_rgb(cr, c);
    cairo_set_line_width(cr, width);
    cairo_move_to(cr, x0, y0);
    cairo_line_to(cr, x1, y1);
    cairo_stroke(cr);
}

static void box(cairo_t *cr, double x, double y, double w, double h, rgb c)
{
    set_rgb(cr, c);
    cairo_rectangle(cr, x, y, w, h);
    cairo_fill(cr);
}

/* A tick step of 1, 2 or 5 times a power of ten giving about n ticks over span. */
static double nice_step(double span, int n)
{
    if (!(span > 0)) return 1;
    double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* "2.5k", "750 MB", "1.5 TB" */
static void compact(double v, int bytes, char *buf, size_t n)
{
    static const char *const units[] = {"", "k", "M", "G", "T", "P"};
    int u = 0;
    while (fabs(v) >= 1000 && u < 5) v /= 1000, u++;
    const char *unit = bytes ? (u ? units[u] : "") : units[u];
    snprintf(buf, n, "%.*f%s%s%s", fabs(v) < 10 && v != floor(v) ? 1 : 0, v, bytes ? " " : "", unit, bytes ? "B" : "");
}

/* ---------- the timeline ---------- */

#define TL_W 1400.0
#define TL_LABEL_W 120.0
#define TL_MARGIN 12.0
#define TL_TOP 78.0
#define TL_BOTTOM 44.0
#define TL_ROWS_H_MAX 9600.0 /* rows shrink below TL_ROW_H past this height */
#define TL_ROW_H 16.0

static rgb hex_rgb(const char *hex);

/* fill colours by kind: palette.h's, the Timeline screen's too */
_Static_assert(PALETTE_SIM_KINDS == SIM__KINDS, "a colour per simulated task kind");
static rgb kind_fill(int k) { return hex_rgb(sim_kind_colours[k].fill); }
static const char *const kind_label[SIM__KINDS] = {"forward",       "input gradient", "weight gradient", "transfer",
                                                   "gradient sync", "all-gather",     "reduce-scatter",
                                                   "partial-sum reduce", "optimizer step"};

typedef struct tl_item {
    double start;
    int task;
} tl_item;

static int cmp_item(const void *x, const void *y)
{
    const tl_item *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->task - b->task;
}

typedef struct tl_draw {
    const sim_result *s;
    const cost_model *m;
    const char *strategy;
    int n_rows;
    int *rows;       /* [n_rows] resource of each row: every GPU, then links and NICs used */
    int *first;      /* [n_res + 1] items of resource r: items[first[r] .. first[r+1]) */
    tl_item *items;  /* by resource, then start */
    double row_h;
} tl_draw;

static void tl_index(tl_draw *d)
{
    const sim_result *s = d->s;
    d->first = lw_calloc((size_t)s->n_res + 1, sizeof(int));
    for (int k = 0; k < s->n_tasks; k++)
        for (int i = 0; i < s->tasks[k].n_res; i++) d->first[s->res_of[s->tasks[k].res0 + i] + 1]++;
    for (int r = 0; r < s->n_res; r++) d->first[r + 1] += d->first[r];
    int total = d->first[s->n_res];
    d->items = lw_malloc(sizeof(tl_item) * (size_t)(total ? total : 1));
    int *fill = lw_malloc(sizeof(int) * (size_t)(s->n_res ? s->n_res : 1));
    memcpy(fill, d->first, sizeof(int) * (size_t)s->n_res);
    for (int k = 0; k < s->n_tasks; k++)
        for (int i = 0; i < s->tasks[k].n_res; i++) {
            int r = s->res_of[s->tasks[k].res0 + i];
            d->items[fill[r]++] = (tl_item){s->tasks[k].start_ms, k};
        }
    free(fill);
    d->rows = lw_malloc(sizeof(int) * (size_t)(s->n_res ? s->n_res : 1));
    d->n_rows = 0;
    for (int r = 0; r < s->n_res; r++) {
        qsort(d->items + d->first[r], (size_t)(d->first[r + 1] - d->first[r]), sizeof(tl_item), cmp_item);
        if (s->res[r].kind == SIM_RES_GPU || d->first[r + 1] > d->first[r]) d->rows[d->n_rows++] = r;
    }
}

static int tl_rows(const sim_result *s)
{
    int *used = lw_calloc((size_t)s->n_res + 1, sizeof(int));
    for (int k = 0; k < s->n_tasks; k++)
        for (int i = 0; i < s->tasks[k].n_res; i++) used[s->res_of[s->tasks[k].res0 + i]] = 1;
    int n = 0;
    for (int r = 0; r < s->n_res; r++) n += s->res[r].kind == SIM_RES_GPU || used[r];
    free(used);
    return n;
}

static double row_height(int n_rows)
{
    if (n_rows * TL_ROW_H <= TL_ROWS_H_MAX) return TL_ROW_H;
    return TL_ROWS_H_MAX / n_rows;
}

void draw_sim_step_size(const sim_result *s, double *w, double *h)
{
    int n = tl_rows(s);
    *w = TL_W;
    *h = TL_TOP + n * row_height(n) + TL_BOTTOM;
}

/* The boxes of one row. Boxes narrower than 2 points of one kind that lie
 * within 2 points of each other are drawn as one (a viewer could not tell
 * them apart), so a model-parallel step of tens of thousands of transfer
 * pieces draws about half as many shapes. */
static void tl_row(cairo_t *cr, const tl_draw *d, int r, double y, double x0, double scale)
{
    const sim_result *s = d->s;
    double h = d->row_h > 3 ? d->row_h - 2 : d->row_h;
    double run_x0 = 0, run_x1 = -1;
    int run_kind = -1;
    for (int i = d->first[r]; i < d->first[r + 1]; i++) {
        const sim_task *t = &s->tasks[d->items[i].task];
        if (!(t->dur_ms > 0)) continue;
        double a = x0 + t->start_ms * scale, b = x0 + t->end_ms * scale;
        if (b - a >= 2) {
            if (run_kind >= 0) box(cr, run_x0, y, run_x1 - run_x0, h, kind_fill(run_kind));
            run_kind = -1;
            box(cr, a, y, b - a > 3 ? b - a - 0.6 : b - a, h, kind_fill(t->kind));
            const char *name = t->layer >= 0 && t->layer < d->m->n_layers ? d->m->net->layers[t->layer].name : "";
            if (d->row_h >= 10 && text_width(cr, name) + 4 < b - a) {
                cairo_set_source_rgb(cr, 1, 1, 1);
                text(cr, a + 2, y + h - 3.5, 0, name);
            }
            continue;
        }
        if (run_kind == (int)t->kind && a - run_x1 < 2.0) {
            if (b > run_x1) run_x1 = b;
            continue;
        }
        if (run_kind >= 0) box(cr, run_x0, y, run_x1 - run_x0, h, kind_fill(run_kind));
        run_kind = (int)t->kind;
        run_x0 = a;
        run_x1 = b > a + 0.5 ? b : a + 0.5;
    }
    if (run_kind >= 0) box(cr, run_x0, y, run_x1 - run_x0, h, kind_fill(run_kind));
}

static void tl_paint(cairo_t *cr, const void *user)
{
    const tl_draw *d = user;
    const sim_result *s = d->s;
    const cost_model *m = d->m;
    double w, hgt;
    draw_sim_step_size(s, &w, &hgt);
    char buf[512];
    set_rgb(cr, INK);
    font(cr, 15, 1);
    snprintf(buf, sizeof buf, "One training step, simulated: %s on %s, %d GPU%s, batch %ld, %s, %s", m->net->name,
             m->cl->name, s->gpus, s->gpus == 1 ? "" : "s", s->batch, precision_name(m->prec),
             sync_scheme_name(m->cl->sync));
    text(cr, TL_MARGIN, 22, 0, buf);
    font(cr, 12, 0);
    double saved = s->eq1_ms > 0 ? 100 * (s->eq1_ms - s->step_ms) / s->eq1_ms : 0;
    snprintf(buf, sizeof buf,
             "strategy: %s.  Simulated step %.2f ms (overlap %s, %.0f images/s)  |  Eq. 1 estimate %.2f ms "
             "(additive)  |  overlap saves %.1f%%",
             d->strategy ? d->strategy : "optimum", s->step_ms, sim_overlap_name(s->overlap), s->images_per_s,
             s->eq1_ms, saved);
    text(cr, TL_MARGIN, 42, 0, buf);

    double x0 = TL_MARGIN + TL_LABEL_W, x1 = w - TL_MARGIN;
    double span = s->step_ms > 0 ? s->step_ms : 1;
    double scale = (x1 - x0) / span;
    double top = TL_TOP, bottom = TL_TOP + d->n_rows * d->row_h;
    /* time axis: ticks and light rules */
    font(cr, 10, 0);
    double step = nice_step(span, 12);
    for (double t = 0; t <= span * (1 + 1e-9); t += step) {
        double x = x0 + t * scale;
        line(cr, x, top - 4, x, bottom, RULE, 0.5);
        set_rgb(cr, GREY);
        snprintf(buf, sizeof buf, "%g", t);
        text(cr, x, top - 7, 1, buf);
    }
    set_rgb(cr, GREY);
    text(cr, x0 - 6, top - 7, 2, "ms");
    /* rows: the resource's name, then its boxes (layer names in a smaller font) */
    for (int i = 0; i < d->n_rows; i++) {
        int r = d->rows[i];
        double y = top + i * d->row_h;
        if (d->row_h >= 6) {
            char lab[64];
            sim_resource_name(&s->res[r], lab, sizeof lab);
            font(cr, d->row_h >= 10 ? 9.5 : d->row_h * 0.9, 0);
            set_rgb(cr, INK);
            text(cr, TL_MARGIN, y + d->row_h - 4, 0, lab);
        }
        font(cr, 8, 0);
        tl_row(cr, d, r, y + (d->row_h > 3 ? 1 : 0), x0, scale);
    }
    line(cr, x0, top, x0, bottom, GREY, 0.8);
    line(cr, x0 + s->step_ms * scale, top, x0 + s->step_ms * scale, bottom, GREY, 0.8);
    /* legend */
    font(cr, 11, 0);
    double lx = TL_MARGIN, ly = bottom + 26;
    for (int k = 0; k < SIM__KINDS; k++) {
        box(cr, lx, ly - 10, 14, 12, kind_fill(k));
        set_rgb(cr, INK);
        lx += 20 + text(cr, lx + 20, ly, 0, kind_label[k]) + 24;
    }
    set_rgb(cr, GREY);
    text(cr, x1, ly, 2, "white space: idle.  Eq. 1 adds every term; the simulator overlaps what can overlap.");
}

int draw_sim_step(const sim_result *s, const cost_model *m, const char *strategy, const char *path, lw_error *err)
{
    if (draw_check_path(path, err) != 0) return -1;
    if (!s || !m) return lw_fail(err, 1, "%s: no simulated step to draw", path);
    tl_draw d = {s, m, strategy, 0, NULL, NULL, NULL, 0};
    tl_index(&d);
    d.row_h = row_height(d.n_rows);
    double w, h;
    draw_sim_step_size(s, &w, &h);
    int rc = render(path, w, h, tl_paint, &d, err);
    free(d.rows);
    free(d.first);
    free(d.items);
    return rc;
}

/* ---------- a pipelined step ---------- */

typedef struct pipe_draw {
    const pipe_sim *r;
    const char *const *rows;
    const char *title, *subtitle;
} pipe_draw;

#define PD_ROW_H 26.0

static int pipe_kind(pipe_sim_kind k)
{
    return k == PIPE_SIM_FORWARD ? SIM_FORWARD : k == PIPE_SIM_BACKWARD ? SIM_BACKWARD_DATA : SIM_SYNC;
}

static void pipe_paint(cairo_t *cr, const void *user)
{
    const pipe_draw *d = user;
    const pipe_sim *r = d->r;
    set_rgb(cr, INK);
    font(cr, 15, 1);
    text(cr, TL_MARGIN, 22, 0, d->title);
    font(cr, 12, 0);
    text(cr, TL_MARGIN, 42, 0, d->subtitle);
    double x0 = TL_MARGIN + TL_LABEL_W, x1 = TL_W - TL_MARGIN, span = r->step_ms > 0 ? r->step_ms : 1;
    double scale = (x1 - x0) / span, top = TL_TOP, bottom = TL_TOP + r->p * PD_ROW_H;
    char buf[64];
    font(cr, 10, 0);
    double step = nice_step(span, 12);
    for (double t = 0; t <= span * (1 + 1e-9); t += step) {
        line(cr, x0 + t * scale, top - 4, x0 + t * scale, bottom, RULE, 0.5);
        set_rgb(cr, GREY);
        snprintf(buf, sizeof buf, "%g", t);
        text(cr, x0 + t * scale, top - 7, 1, buf);
    }
    set_rgb(cr, GREY);
    text(cr, x0 - 6, top - 7, 2, "ms");
    for (int i = 0; i < r->p; i++) {
        font(cr, 9.5, 0);
        set_rgb(cr, INK);
        text(cr, TL_MARGIN, top + i * PD_ROW_H + PD_ROW_H - 9, 0, d->rows[i]);
    }
    font(cr, 9, 0);
    for (int k = 0; k < r->n_tasks; k++) {
        const pipe_sim_task *t = &r->tasks[k];
        double a = x0 + t->start_ms * scale, b = x0 + t->end_ms * scale, y = top + t->stage * PD_ROW_H + 2;
        box(cr, a, y, b - a > 1.5 ? b - a - 0.6 : b - a, PD_ROW_H - 4, kind_fill(pipe_kind(t->kind)));
        if (t->micro < 0) snprintf(buf, sizeof buf, "S");
        else snprintf(buf, sizeof buf, "%s%d", t->kind == PIPE_SIM_FORWARD ? "F" : "B", t->micro);
        if (text_width(cr, buf) + 3 < b - a) {
            cairo_set_source_rgb(cr, 1, 1, 1);
            text(cr, a + 2, y + PD_ROW_H - 10, 0, buf);
        }
    }
    line(cr, x0, top, x0, bottom, GREY, 0.8);
    line(cr, x0 + r->step_ms * scale, top, x0 + r->step_ms * scale, bottom, GREY, 0.8);
    font(cr, 11, 0);
    double lx = TL_MARGIN, ly = bottom + 26;
    static const char *const names[] = {"forward (F micro-batch)", "backward (B micro-batch)", "sync"};
    for (int k = 0; k < 3; k++) {
        box(cr, lx, ly - 10, 14, 12, kind_fill(pipe_kind((pipe_sim_kind)k)));
        set_rgb(cr, INK);
        lx += 20 + text(cr, lx + 20, ly, 0, names[k]) + 24;
    }
    set_rgb(cr, GREY);
    text(cr, x1, ly, 2, "white space: idle, the schedule's bubble");
}

int draw_pipe_step(const pipe_sim *r, const char *const *rows, const char *title, const char *subtitle,
                   const char *path, lw_error *err)
{
    if (draw_check_path(path, err) != 0) return -1;
    if (!r) return lw_fail(err, 1, "%s: no pipelined step to draw", path);
    pipe_draw d = {r, rows, title, subtitle};
    return render(path, TL_W, TL_TOP + r->p * PD_ROW_H + TL_BOTTOM, pipe_paint, &d, err);
}

/* ---------- grouped bar charts ---------- */

#define BC_W 1000.0
#define BC_TOP 40.0
#define BC_PANEL_H 330.0
#define BC_AXIS_W 70.0
#define BC_MARGIN 14.0

static const rgb series_rgb[8] = {
    {0.30, 0.47, 0.66}, {0.96, 0.52, 0.09}, {0.33, 0.64, 0.29}, {0.89, 0.34, 0.34},
    {0.70, 0.47, 0.64}, {0.62, 0.46, 0.38}, {0.47, 0.72, 0.70}, {0.93, 0.79, 0.28},
};

typedef struct bc_draw {
    const char *title;
    const draw_bars *panels;
    int n_panels;
} bc_draw;

void draw_bar_charts_size(int n_panels, double *w, double *h)
{
    *w = BC_W;
    *h = BC_TOP + (n_panels > 0 ? n_panels : 1) * BC_PANEL_H;
}

static void bc_panel(cairo_t *cr, const draw_bars *p, double y0)
{
    char buf[64];
    set_rgb(cr, INK);
    font(cr, 13, 1);
    text(cr, BC_MARGIN, y0 + 18, 0, p->title ? p->title : "");
    double px0 = BC_MARGIN + BC_AXIS_W, px1 = BC_W - BC_MARGIN;
    double top = y0 + 34, base = y0 + BC_PANEL_H - 70;
    int ns = p->n_series < 0 ? 0 : p->n_series > 8 ? 8 : p->n_series;
    double mx = 0, mn = INFINITY;
    for (int i = 0; i < p->n_groups * p->n_series; i++) {
        double v = p->values[i];
        if (!isfinite(v)) continue;
        if (v > mx) mx = v;
        if (v > 0 && v < mn) mn = v;
    }
    /* the value axis: [lo, hi] linear from 0, or decades */
    double lo = 0, hi;
    font(cr, 10, 0);
    if (p->log_scale) {
        hi = pow(10, ceil(log10(mx > 0 ? mx : 1)));
        lo = pow(10, floor(log10(isfinite(mn) ? mn : 1)));
        if (lo >= hi) lo = hi / 10;
        if (hi / lo > 1e8) lo = hi / 1e8;
        for (double v = lo; v <= hi * 1.0001; v *= 10) {
            double y = base - (log10(v) - log10(lo)) / (log10(hi) - log10(lo)) * (base - top);
            line(cr, px0, y, px1, y, RULE, 0.5);
            compact(v, p->bytes, buf, sizeof buf);
            set_rgb(cr, GREY);
            text(cr, px0 - 6, y + 3.5, 2, buf);
        }
    } else {
        double step = nice_step(mx > 0 ? mx : 1, 5);
        hi = ceil((mx > 0 ? mx : 1) / step) * step;
        for (double v = 0; v <= hi * 1.0001; v += step) {
            double y = base - v / hi * (base - top);
            line(cr, px0, y, px1, y, RULE, 0.5);
            compact(v, p->bytes, buf, sizeof buf);
            set_rgb(cr, GREY);
            text(cr, px0 - 6, y + 3.5, 2, buf);
        }
    }
    line(cr, px0, base, px1, base, GREY, 1);
    double gw = p->n_groups > 0 ? (px1 - px0) / p->n_groups : px1 - px0;
    double bw = ns > 0 ? (gw * 0.8) / ns : gw;
    for (int g = 0; g < p->n_groups; g++) {
        double gx = px0 + g * gw + gw * 0.1;
        for (int k = 0; k < ns; k++) {
            double v = p->values[g * p->n_series + k];
            if (!isfinite(v) || (p->log_scale && v <= 0)) continue;
            double f = p->log_scale ? (log10(v) - log10(lo)) / (log10(hi) - log10(lo)) : v / hi;
            if (f < 0) f = 0;
            if (f > 1) f = 1;
            box(cr, gx + k * bw, base - f * (base - top), bw > 3 ? bw - 1 : bw, f * (base - top), series_rgb[k]);
        }
        set_rgb(cr, INK);
        font(cr, 11, 0);
        text(cr, px0 + (g + 0.5) * gw, base + 16, 1, p->group_names ? p->group_names[g] : "");
        font(cr, 10, 0);
    }
    font(cr, 11, 0);
    double lx = px0, ly = base + 42;
    for (int k = 0; k < ns; k++) {
        box(cr, lx, ly - 10, 14, 12, series_rgb[k]);
        set_rgb(cr, INK);
        lx += 20 + text(cr, lx + 20, ly, 0, p->series_names ? p->series_names[k] : "") + 24;
    }
}

static void bc_paint(cairo_t *cr, const void *user)
{
    const bc_draw *d = user;
    set_rgb(cr, INK);
    font(cr, 15, 1);
    text(cr, BC_MARGIN, 24, 0, d->title ? d->title : "");
    for (int i = 0; i < d->n_panels; i++) bc_panel(cr, &d->panels[i], BC_TOP + i * BC_PANEL_H);
}

int draw_bar_charts(const char *title, const draw_bars *panels, int n_panels, const char *path, lw_error *err)
{
    if (draw_check_path(path, err) != 0) return -1;
    if (n_panels < 1 || !panels) return lw_fail(err, 1, "%s: no chart to draw", path);
    for (int i = 0; i < n_panels; i++)
        if (panels[i].n_groups < 0 || panels[i].n_series < 1 || panels[i].n_series > 8 || !panels[i].values)
            return lw_fail(err, 1, "%s: chart %d has %d series (1 to 8 drawn)", path, i + 1, panels[i].n_series);
    bc_draw d = {title, panels, n_panels};
    double w, h;
    draw_bar_charts_size(n_panels, &w, &h);
    return render(path, w, h, bc_paint, &d, err);
}

/* ---------- the lecture chart ---------- */

#define LC_W 1100.0
#define LC_MARGIN 14.0
#define LC_NAME_W 230.0
#define LC_TOP 86.0
#define LC_BOTTOM 56.0
#define LC_ROWS_H_MAX 9000.0 /* rows shrink below LC_ROW_H past this height */
#define LC_ROW_H 15.0

typedef struct lc_draw {
    const char *title;
    const draw_lecture_row *rows;
    int n;
} lc_draw;

static double lc_row_h(int n)
{
    return n > 0 && n * LC_ROW_H > LC_ROWS_H_MAX ? LC_ROWS_H_MAX / n : LC_ROW_H;
}

void draw_lecture_size(int n, double *w, double *h)
{
    *w = LC_W;
    *h = LC_TOP + (n > 0 ? n : 1) * lc_row_h(n) + LC_BOTTOM;
}

static rgb hex_rgb(const char *hex)
{
    unsigned v = 0;
    if (hex && hex[0] == '#') v = (unsigned)strtoul(hex + 1, NULL, 16);
    return (rgb){((v >> 16) & 255) / 255.0, ((v >> 8) & 255) / 255.0, (v & 255) / 255.0};
}

/* The decades [*lo, *hi] that hold every positive value (at most 8). */
static void lc_range(const lc_draw *d, double *lo, double *hi)
{
    double mx = 0, mn = INFINITY;
    for (int i = 0; i < d->n; i++) {
        double v[2] = {d->rows[i].sync_bytes, d->rows[i].move_bytes};
        for (int k = 0; k < 2; k++) {
            if (!(v[k] > 0) || !isfinite(v[k])) continue;
            if (v[k] > mx) mx = v[k];
            if (v[k] < mn) mn = v[k];
        }
    }
    *hi = pow(10, ceil(log10(mx > 0 ? mx : 1e6)));
    *lo = pow(10, floor(log10(isfinite(mn) ? mn : *hi / 1e3)));
    if (*lo >= *hi) *lo = *hi / 10;
    if (*hi / *lo > 1e8) *lo = *hi / 1e8;
}

/* How far from the axis (0..1) a bar of v reaches on [lo, hi]. */
static double lc_frac(double v, double lo, double hi)
{
    if (!(v > 0) || !isfinite(v)) return 0;
    double f = (log10(v) - log10(lo)) / (log10(hi) - log10(lo));
    return f < 0 ? 0.02 : f > 1 ? 1 : f;
}

/* The two scales, each from the name column outwards, with decade rules. */
static void lc_axes(cairo_t *cr, double lo, double hi, double y0, double y1)
{
    double cx = LC_W / 2, half = LC_NAME_W / 2, span = cx - half - LC_MARGIN;
    char buf[32];
    font(cr, 10, 0);
    for (double v = lo; v <= hi * 1.0001; v *= 10) {
        double f = lc_frac(v, lo, hi);
        compact(v, 1, buf, sizeof buf);
        for (int side = -1; side <= 1; side += 2) {
            double x = cx + side * (half + f * span);
            line(cr, x, y0, x, y1, RULE, 0.5);
            set_rgb(cr, GREY);
            text(cr, x, y0 - 4, 1, buf);
        }
    }
    font(cr, 12, 1);
    set_rgb(cr, INK);
    text(cr, cx - half, y0 - 20, 2, "weights synced if split by sample (t_s)");
    text(cr, cx + half, y0 - 20, 0, "activations moved if split by channel (t_x)");
}

static void lc_paint(cairo_t *cr, const void *user)
{
    const lc_draw *d = user;
    double lo, hi, rh = lc_row_h(d->n), cx = LC_W / 2, half = LC_NAME_W / 2, span = cx - half - LC_MARGIN;
    lc_range(d, &lo, &hi);
    set_rgb(cr, INK);
    font(cr, 15, 1);
    text(cr, LC_MARGIN, 24, 0, d->title ? d->title : "");
    double y0 = LC_TOP, y1 = LC_TOP + d->n * rh;
    lc_axes(cr, lo, hi, y0, y1);
    double fs = rh * 0.7 < 11 ? rh * 0.7 : 11;
    int present[SPLIT__COUNT] = {0};
    for (int i = 0; i < d->n; i++) {
        const draw_lecture_row *r = &d->rows[i];
        int cls = r->cls >= 0 && r->cls < SPLIT__COUNT ? r->cls : SPLIT_ONE;
        present[cls] = 1;
        rgb ink = hex_rgb(split_colours[cls].line);
        double y = y0 + i * rh, bh = rh * 0.8;
        double fl = lc_frac(r->sync_bytes, lo, hi) * span, fr = lc_frac(r->move_bytes, lo, hi) * span;
        /* bars in the class's strong colour, to read from the back of a room */
        if (fl > 0) box(cr, cx - half - fl, y + rh * 0.1, fl, bh, ink);
        if (fr > 0) box(cr, cx + half, y + rh * 0.1, fr, bh, ink);
        if (fs >= 5) {
            char lab[128];
            snprintf(lab, sizeof lab, "%.60s  %.40s", r->layer ? r->layer : "", r->config ? r->config : "");
            font(cr, fs, 0);
            set_rgb(cr, ink);
            text(cr, cx, y + rh * 0.5 + fs * 0.35, 1, lab);
        }
    }
    /* the key: the classes present */
    font(cr, 11, 0);
    double lx = LC_MARGIN, ly = y1 + 32;
    set_rgb(cr, INK);
    lx += text(cr, lx, ly, 0, "chosen split:") + 10;
    for (int c = 0; c < SPLIT__COUNT; c++) {
        if (!present[c]) continue;
        box(cr, lx, ly - 10, 14, 12, hex_rgb(split_colours[c].fill));
        set_rgb(cr, hex_rgb(split_colours[c].line));
        lx += 20 + text(cr, lx + 20, ly, 0, split_colours[c].name) + 18;
    }
}

int draw_lecture(const char *title, const draw_lecture_row *rows, int n, const char *path, lw_error *err)
{
    if (draw_check_path(path, err) != 0) return -1;
    if (n < 1 || !rows) return lw_fail(err, 1, "%s: no layer to draw", path);
    lc_draw d = {title, rows, n};
    double w, h;
    draw_lecture_size(n, &w, &h);
    return render(path, w, h, lc_paint, &d, err);
}
