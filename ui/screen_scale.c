/*
 * screen_scale: throughput (images/s) and bytes moved per step against the
 * GPU count for data, model, OWT and layer-wise parallelism, as grouped bar
 * charts like the paper's Figures 7 and 8, with the numbers beneath.
 *
 * Each GPU count needs its own cost model and search (half a second for
 * Inception-v3 at 16 GPUs), so the rows are computed lazily when the screen
 * opens, one GPU count per idle slice, and the chart fills in as they come.
 * Each strategy's simulated step is computed with its row: m shows the
 * throughput by Eq. 1, the bytes moved, or the throughput simulated. The
 * current plan's model is reused for its own GPU count. Above 256 GPUs
 * (PLAN_AUTO_SEARCH_MAX_GPUS) a row has the baselines alone, as the CLI's
 * scale. e draws the three charts as SVG, PNG or PDF (src/draw_cairo.h)
 * once every row is in.
 *
 * A pipelined session (| on any screen) adds a fifth series, P: the
 * pipeline of its settings at each row's setting (plan_scale_row's pipe:
 * pipe_search's optimum, or Megatron-LM's stages), its images/s by Eq. 1
 * per stage and the pipelined step, simulated micro-batch by micro-batch
 * on the simulated chart, its MFU; a row without one shows "-" and a
 * footnote says why (P does not divide the count, stages over 256 GPUs,
 * the search refused). The rows are computed again when the pipeline
 * settings change.
 */
#include "draw.h"
#include "screens.h"
#include "draw_cairo.h"
#include "fit.h"
#include "keys.h"
#include "prompt.h"

#include <pthread.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void fit_take(app *a);

static const char series_letter[5] = {'D', 'M', 'O', 'L', 'P'};
static const char *const series_name[5] = {"data", "model", "OWT", "layer-wise", "pipeline"};
enum { S_PIPE = 4 };

/* The series shown: the four strategies, and the pipeline where the rows
 * were computed for a pipelined session. */
static int n_series(const app *a)
{
    return scale_of(a)->pipe.stages > 1 ? 5 : 4;
}

/* The worker: computes every row and writes each whole to the pipe (a row
 * is far below PIPE_BUF, so each write is atomic), then leaves with _exit:
 * no atexit handler may touch the terminal from here. */
static void worker(app *a, int fd)
{
    for (int i = 0; i < scale_of(a)->n; i++) {
        lw_error err = {0};
        plan_sweep_row_compute(a->p, (plan_sweep_axis)scale_of(a)->axis, &scale_of(a)->rows[i], &err);
        const unsigned char *b = (const unsigned char *)&scale_of(a)->rows[i];
        size_t left = sizeof(scale_row);
        while (left) {
            ssize_t k = write(fd, b, left);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) _exit(1);
            b += k;
            left -= (size_t)k;
        }
    }
    _exit(0);
}

/* The axis's current value in the plan's setting. */
static double axis_now(const app *a, int axis)
{
    const plan *p = a->p;
    switch (axis) {
    case PLAN_SWEEP_INTER_BW: return plan_cluster(p)->inter.bandwidth_gbs;
    case PLAN_SWEEP_BATCH: return (double)app_batch_per_gpu(a);
    case PLAN_SWEEP_GPUS_PER_NODE: return plan_cluster(p)->gpus_per_node;
    default: return plan_gpus(p);
    }
}

/* The values the rows sweep, into x (at most 16); how many. GPUs: 1, 2,
 * 4, ... and the cluster's count; the inter-node bandwidth: now / 8 to
 * now x 8 by doublings; the batch per GPU the same, whole and at least 1;
 * the GPUs per node: 1, 2, 4, ... up to the GPUs in use, and now. */
static int axis_values(const app *a, int axis, double *x)
{
    int n = 0;
    double now = axis_now(a, axis);
    if (axis == PLAN_SWEEP_GPUS || axis == PLAN_SWEEP_GPUS_PER_NODE) {
        int total = axis == PLAN_SWEEP_GPUS ? cluster_gpus(plan_cluster(a->p)) : plan_gpus(a->p);
        for (int g = 1; g <= total && n < 15; g *= 2) x[n++] = g;
        if ((total & (total - 1)) != 0) x[n++] = total;
        if (axis == PLAN_SWEEP_GPUS_PER_NODE && now > x[n - 1]) x[n++] = now;
        return n;
    }
    for (int k = -3; k <= 3; k++) {
        double v = now * pow(2, k);
        if (axis == PLAN_SWEEP_BATCH) {
            v = floor(v);
            if (v < 1 || v > PLAN_MAX_BATCH_PER_GPU || (n && v == x[n - 1])) continue;
        }
        x[n++] = v;
    }
    return n;
}

void scale_start(app *a)
{
    if (scale_of(a)->rows) return;
    double x[16];
    int n = axis_values(a, scale_of(a)->axis, x);
    scale_of(a)->rows = lw_calloc((size_t)n, sizeof(scale_row));
    for (int k = 0; k < n; k++) {
        scale_of(a)->rows[k].x = x[k];
        scale_of(a)->rows[k].gpus = scale_of(a)->axis == PLAN_SWEEP_GPUS ? (int)x[k] : plan_gpus(a->p);
    }
    scale_of(a)->n = n;
    scale_of(a)->done = 0;
    scale_of(a)->valid = 0;
    scale_of(a)->buf_len = 0;
    scale_of(a)->pipe = *plan_pipe_settings_of(a->p);
    if (!a->workers || !plan_has_model(a->p)) return;
    /* The child has no thread but the one forking: a lock another thread
     * holds at the fork stays held there for good. glibc's malloc takes
     * care of its own, AddressSanitizer's allocator does not (the test
     * builds hung in the child's first malloc while the prefetch worker
     * kept the first model's counts, or was ending), so that work is let
     * finish first and its thread end where nothing else is queued: 0.1 s
     * at 16 GPUs, up to about 1.3 s at 64, the time the first model spent
     * keeping them in the foreground before. (Builds ahead still running
     * carry on: glibc's fork is safe with them.) */
    (void)plan_background_join(a->p);
    int fds[2];
    if (pipe(fds) != 0) return; /* no worker: compute in-process */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        worker(a, fds[1]);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    scale_of(a)->pid = (int)pid;
    scale_of(a)->fd = fds[0];
}

/* Drops the rows (and stops their worker): recomputed when next wanted. */
static void scale_drop(app *a)
{
    scale_state *ss = scale_of(a);
    scale_stop(a);
    free(ss->rows);
    ss->rows = NULL;
    ss->n = ss->done = 0;
    ss->valid = 0;
}

void scale_stop(app *a)
{
    if (scale_of(a)->pid > 0) {
        kill((pid_t)scale_of(a)->pid, SIGKILL);
        while (waitpid((pid_t)scale_of(a)->pid, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    if (scale_of(a)->fd >= 0) close(scale_of(a)->fd);
    scale_of(a)->pid = 0;
    scale_of(a)->fd = -1;
    scale_of(a)->buf_len = 0;
}

/* The rows not in yet: every figure NaN, the pipeline's why said. */
static void rows_missing(app *a, const char *why)
{
    scale_state *ss = scale_of(a);
    for (int i = ss->done; i < ss->n; i++) {
        scale_row *r = &ss->rows[i];
        for (int s = 0; s < 4; s++) r->ips[s] = r->bytes[s] = r->total_ms[s] = r->sim_ips[s] = r->mfu[s] = NAN;
        r->pipe = (plan_scale_pipe){.stages = ss->pipe.stages > 1 ? ss->pipe.stages : 0};
        snprintf(r->pipe.why, sizeof r->pipe.why, "%s", why);
    }
    ss->done = ss->n;
}

/* Takes the rows the worker has written so far. */
static void receive(app *a)
{
    for (;;) {
        ssize_t k = read(scale_of(a)->fd, scale_of(a)->buf + scale_of(a)->buf_len, sizeof(scale_row) - (size_t)scale_of(a)->buf_len);
        if (k > 0) {
            scale_of(a)->buf_len += (int)k;
            if (scale_of(a)->buf_len == (int)sizeof(scale_row)) {
                if (scale_of(a)->done < scale_of(a)->n) memcpy(&scale_of(a)->rows[scale_of(a)->done++], scale_of(a)->buf, sizeof(scale_row));
                scale_of(a)->buf_len = 0;
                if (scale_of(a)->done == scale_of(a)->n) {
                    /* the last row: the worker is exiting now; reap it here, since
                     * nothing polls the pipe once every row is in */
                    while (waitpid((pid_t)scale_of(a)->pid, NULL, 0) < 0 && errno == EINTR) {
                    }
                    close(scale_of(a)->fd);
                    scale_of(a)->pid = 0;
                    scale_of(a)->fd = -1;
                    return;
                }
            }
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        /* end of the pipe: the worker is done (or died) */
        int st = 0;
        while (waitpid((pid_t)scale_of(a)->pid, &st, 0) < 0 && errno == EINTR) {
        }
        close(scale_of(a)->fd);
        scale_of(a)->pid = 0;
        scale_of(a)->fd = -1;
        if (scale_of(a)->done < scale_of(a)->n) {
            app_set_status(a, 1, "scaling: the worker stopped after %d of %d GPU counts (status %d)", scale_of(a)->done,
                           scale_of(a)->n, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
            rows_missing(a, "the worker stopped");
        }
        return;
    }
}

int scale_step(app *a)
{
    if (!scale_of(a)->rows) scale_start(a);
    if (scale_of(a)->done >= scale_of(a)->n) return 0;
    if (scale_of(a)->pid > 0) {
        receive(a);
    } else {
        lw_error err = {0};
        scale_row *row = &scale_of(a)->rows[scale_of(a)->done];
        plan_sweep_row_compute(a->p, (plan_sweep_axis)scale_of(a)->axis, row, &err);
        if (err.msg[0]) app_set_status(a, 1, "scaling at %g: %s", row->x, err.msg);
        scale_of(a)->done++;
    }
    if (scale_of(a)->done == scale_of(a)->n) scale_of(a)->valid = 1;
    return scale_of(a)->done < scale_of(a)->n;
}

/* The metrics m cycles through: images/s by Eq. 1, bytes moved, images/s simulated. */
/* (and the model FLOPs utilisation of the Eq. 1 step, in %: a transformer's yardstick) */
enum { M_IPS, M_BYTES, M_SIM_IPS, M_MFU };
/* (series S_PIPE: the pipeline's; its bytes are not counted: NaN) */
static double metric(const scale_row *r, int m, int s)
{
    if (s == S_PIPE) {
        const plan_scale_pipe *q = &r->pipe;
        if (!q->found || m == M_BYTES) return NAN;
        return m == M_IPS ? q->images_per_s : m == M_MFU ? q->mfu * 100 : q->sim_ips;
    }
    return m == M_IPS ? r->ips[s] : m == M_BYTES ? r->bytes[s] : m == M_MFU ? r->mfu[s] * 100 : r->sim_ips[s];
}

/* At most 7 columns: "2.5k", "750MB", "1.5TB". */
static const char *compact(double v, int bytes, char *buf, size_t n)
{
    static const char *const units[] = {"", "k", "M", "G", "T", "P"};
    const char *b = bytes ? "B" : "";
    if (!isfinite(v)) {
        snprintf(buf, n, "-");
        return buf;
    }
    int u = 0;
    while (v >= 1000 && u < 5) {
        v /= 1000;
        u++;
    }
    if (bytes && u == 1) snprintf(buf, n, "%.0fKB", v);
    else if (v >= 100 || u == 0) snprintf(buf, n, "%.0f%s%s", v, units[u], b);
    else snprintf(buf, n, "%.3g%s%s", v, units[u], b);
    return buf;
}

/* Bar height in eighths of a row: linear for images/s; for bytes a log
 * scale over whole decades (as in the paper's Figure 8), since data and
 * model parallelism move tens of times more than layer-wise. */
static int bar_eighths(double v, double lo, double top, int log_scale, int ph)
{
    if (!(v > 0)) return 0;
    double f = log_scale ? (log10(v) - log10(lo)) / (log10(top) - log10(lo)) : v / top;
    int e = (int)lround(f * ph * 8);
    if (e < 1) e = 1; /* visible, however small */
    if (e > ph * 8) e = ph * 8;
    return e;
}

/* A round number at least v: 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a
 * power of ten, so the tallest bar fills most of the chart. */
static double nice_ceiling(double v)
{
    static const double steps[] = {1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
    if (v <= 0 || !isfinite(v)) return 1;
    double e = pow(10, floor(log10(v)));
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++)
        if (steps[k] * e >= v * 0.999) return steps[k] * e;
    return 10 * e;
}

static const char *const axis_name[PLAN_SWEEP__COUNT] = {"GPU count", "inter-node bandwidth", "batch per GPU",
                                                          "GPUs per node"};

/* A row's value of the axis: "16 GPUs", "11.5 GB/s", "b 32", "4/node"
 * (brief: the number alone, for the numbers' header). */
static const char *row_label(const app *a, const scale_row *row, int brief, char *b, size_t n)
{
    switch (scale_of(a)->axis) {
    case PLAN_SWEEP_INTER_BW: snprintf(b, n, brief ? "%.3g" : "%.3g GB/s", row->x); break;
    case PLAN_SWEEP_BATCH: snprintf(b, n, brief ? "%.0f" : "b %.0f", row->x); break;
    case PLAN_SWEEP_GPUS_PER_NODE: snprintf(b, n, brief ? "%.0f" : "%.0f/node", row->x); break;
    default: snprintf(b, n, brief ? "%d" : "%d GPU%s", row->gpus, row->gpus == 1 ? "" : "s");
    }
    return b;
}

static void chart(app *a, WINDOW *w, rect r, int m)
{
    ui_putf(w, r.y, r.x, r.w, ST_BOLD, "%s",
            m == M_IPS     ? "training throughput, images/s, Eq. 1 (like Figure 7)"
            : m == M_BYTES ? "data moved between GPUs per step, log scale (like Figure 8)"
            : m == M_MFU   ? "model FLOPs utilisation (MFU), %, Eq. 1"
                           : "training throughput, images/s, simulated (overlap)");
    int axis_w = 8;
    int ph = r.h - 4; /* title, letters, GPU counts, legend */
    if (ph < 2) return;
    const int ns = m == M_BYTES ? 4 : n_series(a); /* the pipeline's bytes are not counted */
    double mx = 0, mn = INFINITY;
    for (int i = 0; i < scale_of(a)->done; i++)
        for (int s = 0; s < ns; s++) {
            double v = metric(&scale_of(a)->rows[i], m, s);
            if (!isfinite(v)) continue;
            if (v > mx) mx = v;
            if (v > 0 && v < mn) mn = v;
        }
    int log_scale = m == M_BYTES;
    double top = log_scale ? pow(10, ceil(log10(mx > 0 ? mx : 1))) : nice_ceiling(mx);
    double lo = log_scale ? pow(10, floor(log10(isfinite(mn) ? mn : 1))) : 0;
    if (log_scale && lo >= top) lo = top / 10;
    if (log_scale && top / lo > 1e6) lo = top / 1e6; /* six decades at most */
    int top_y = r.y + 1, base_y = r.y + 1 + ph; /* base_y: the letters row */
    char b[32];
    for (int k = 0; k <= 2; k++) {
        int y = top_y + (ph - 1) * k / 2;
        double v = log_scale ? pow(10, log10(top) - (log10(top) - log10(lo)) * k / 2.0) : top * (2 - k) / 2.0;
        if (log_scale && k == 2) v = lo;
        ui_put_right(w, y, r.x, axis_w - 1, ST_DIM, compact(v, m == M_BYTES, b, sizeof b));
    }
    for (int y = top_y; y < base_y; y++) ui_put(w, y, r.x + axis_w - 1, 1, ST_DIM, G->box[LINE_UP | LINE_DOWN]);
    int pw = r.w - axis_w;
    int groups = scale_of(a)->n;
    int gw = groups ? pw / groups : pw;
    int bw = (gw - 3) / ns - 1;
    if (bw > 3) bw = 3;
    if (bw < 1) bw = 1;
    int gap = (gw - 3) / ns > bw ? 1 : 0;
    int content = ns * bw + (ns - 1) * gap;
    for (int i = 0; i < groups; i++) {
        int gx = r.x + axis_w + i * gw + (gw - content) / 2;
        const scale_row *row = &scale_of(a)->rows[i];
        int cur = fabs(row->x - axis_now(a, scale_of(a)->axis)) <= 1e-9 * fabs(row->x);
        char lab[32];
        row_label(a, row, 0, lab, sizeof lab);
        int lw = ui_width(lab);
        ui_put(w, base_y + 1, r.x + axis_w + i * gw + (gw - lw) / 2, lw, cur ? ST_SELECTED : ST_NORMAL, lab);
        for (int s = 0; s < ns; s++) {
            int bx = gx + s * (bw + gap);
            char let[2] = {series_letter[s], 0};
            for (int k = 0; k < bw; k++) ui_put(w, base_y, bx + k, 1, ST_SERIES0 + s, k == (bw - 1) / 2 ? let : " ");
            if (i >= scale_of(a)->done) {
                ui_put(w, base_y - 1, bx, 1, ST_DIM, G->dot);
                continue;
            }
            double v = metric(row, m, s);
            if (!isfinite(v)) continue;
            int eighths = bar_eighths(v, lo, top, log_scale, ph);
            for (int y = 0; y < ph; y++) {
                int fill = eighths - y * 8;
                if (fill <= 0) break;
                if (fill > 8) fill = 8;
                for (int k = 0; k < bw; k++) ui_put(w, base_y - 1 - y, bx + k, 1, ST_SERIES0 + s, G->eighths[fill]);
            }
        }
    }
    int x = r.x;
    for (int s = 0; s < ns; s++) {
        char item[48];
        snprintf(item, sizeof item, "%c %s   ", series_letter[s], series_name[s]);
        x += ui_put(w, base_y + 2, x, r.x + r.w - x, ST_SERIES0 + s, item);
    }
}

static void numbers(app *a, WINDOW *w, rect r, int m)
{
    int lw = 16, cw = 9;
    int fit = (r.w - lw - 10) / cw;
    int first = scale_of(a)->n > fit ? scale_of(a)->n - fit : 0; /* the largest counts matter most */
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    ui_put(w, r.y, r.x, lw, ST_HEADER, m == M_IPS ? "images/s Eq. 1" : m == M_BYTES ? "bytes/step" : m == M_MFU ? "MFU % Eq. 1" : "img/s simulated");
    for (int i = first; i < scale_of(a)->n; i++) {
        char b[32];
        ui_put_right(w, r.y, r.x + lw + (i - first) * cw, cw, ST_HEADER, row_label(a, &scale_of(a)->rows[i], 1, b, sizeof b));
    }
    int sx = r.x + lw + (scale_of(a)->n - first) * cw;
    int gpus_axis = scale_of(a)->axis == PLAN_SWEEP_GPUS;
    if (m != M_BYTES && m != M_MFU) ui_put_right(w, r.y, sx, 10, ST_HEADER, gpus_axis ? "speed-up" : "ratio");
    const int ns = m == M_BYTES ? 4 : n_series(a);
    for (int s = 0; s < ns && s + 1 < r.h; s++) {
        int y = r.y + 1 + s;
        ui_putf(w, y, r.x, lw, ST_SERIES0 + s, "%c %s", series_letter[s], series_name[s]);
        for (int i = first; i < scale_of(a)->n; i++) {
            char b[32];
            if (i >= scale_of(a)->done) snprintf(b, sizeof b, "%s", G->ellipsis);
            else if (m == M_BYTES) compact(scale_of(a)->rows[i].bytes[s], 1, b, sizeof b);
            else if (isfinite(metric(&scale_of(a)->rows[i], m, s))) snprintf(b, sizeof b, "%.1f", metric(&scale_of(a)->rows[i], m, s));
            else snprintf(b, sizeof b, "-");
            if (s == S_PIPE && i < scale_of(a)->done && !scale_of(a)->rows[i].pipe.found)
                snprintf(b, sizeof b, "-%s", G->star); /* none: the footnote says why */
            ui_put_right(w, y, r.x + lw + (i - first) * cw, cw, s == 3 ? ST_BOLD : ST_NORMAL, b);
        }
        const scale_row *first_row = &scale_of(a)->rows[0], *last_row = &scale_of(a)->rows[scale_of(a)->n - 1];
        /* the pipeline's over the first row's own, or layer-wise's where it has none (1 GPU), as scale --pp */
        double base = metric(first_row, m, s);
        if (s == S_PIPE && !(base > 0)) base = metric(first_row, m, 3);
        if (m != M_BYTES && m != M_MFU && scale_of(a)->done == scale_of(a)->n && scale_of(a)->n > 0 && base > 0 &&
            isfinite(metric(last_row, m, s))) {
            char b[32];
            snprintf(b, sizeof b, "%.1fx", metric(last_row, m, s) / base);
            ui_put_right(w, y, sx, 10, s == 3 ? ST_GOOD : ST_NORMAL, b);
        }
    }
}

/* The pipeline series' footnote: what P is, why a row has none (first,
 * so that a narrow screen shows it), and which model made its figures. */
static void pipe_note(const app *a, char *buf, size_t n)
{
    const scale_state *ss = scale_of(a);
    const plan_pipe_settings *q = &ss->pipe;
    char m[32] = "";
    if (q->microbatches) snprintf(m, sizeof m, " x %d", q->microbatches);
    int k = snprintf(buf, n, "P %s%d stages%s (%s):", q->megatron ? "Megatron-LM's pipeline, " : "pipeline, ", q->stages, m,
                     plan_schedule_name(q->schedule));
    int none = 0;
    for (int i = 0; i < ss->done && k < (int)n; i++) {
        if (ss->rows[i].pipe.found) continue;
        char lab[32];
        row_label(a, &ss->rows[i], 0, lab, sizeof lab);
        k += snprintf(buf + k, n - (size_t)k, "%s - at %s: %s", none++ ? ";" : "", lab, ss->rows[i].pipe.why);
    }
    if (k < (int)n)
        snprintf(buf + k, n - (size_t)k, "%s images/s by Eq. 1 per stage and the pipelined step; simulated micro-batch "
                 "by micro-batch", none ? ";" : "");
}

static void draw_scale(app *a, WINDOW *w, rect r)
{
    fit_take(a);
    if (!scale_of(a)->rows) scale_start(a);
    const plan *p = a->p;
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    int x;
    if (scale_of(a)->axis == PLAN_SWEEP_GPUS)
        x = ui_putf(w, r.y, r.x, r.w, ST_HEADER, "%s on %s %s batch %ld/GPU %s %s", plan_net(p)->name, plan_cluster(p)->name, G->dot,
                    app_batch_per_gpu(a), G->dot, sync_scheme_name(plan_cluster(p)->sync));
    else
        x = ui_putf(w, r.y, r.x, r.w, ST_HEADER, "%s, %d GPUs: against the %s (S)", plan_net(p)->name, plan_gpus(p),
                    axis_name[scale_of(a)->axis]);
    if (scale_of(a)->done < scale_of(a)->n)
        x += ui_putf(w, r.y, r.x + x, r.w - x, ST_HEADER, "  %s computing%s %d/%d", G->dot, G->ellipsis,
                     scale_of(a)->done, scale_of(a)->n);
    char unsearched[96] = ""; /* the counts of plan_scale_row_compute's baselines alone */
    for (int i = 0, k = 0; i < scale_of(a)->n; i++)
        if (scale_of(a)->axis == PLAN_SWEEP_GPUS && scale_of(a)->rows[i].gpus > PLAN_AUTO_SEARCH_MAX_GPUS &&
            scale_of(a)->rows[i].gpus != plan_gpus(p) && k < 80)
            k += snprintf(unsearched + k, sizeof unsearched - (size_t)k, "%s%d", k ? ", " : "",
                          scale_of(a)->rows[i].gpus);
    if (unsearched[0])
        ui_putf(w, r.y, r.x + x, r.w - x, ST_HEADER, "  %s layer-wise not searched at %s GPUs (layerwise search)", G->dot,
                unsearched);
    rect body = {r.y + 1, r.x, r.h - 1, r.w};
    if (scale_of(a)->fit_line[0] && body.h > 12) { /* f's answer, on the last row */
        body.h--;
        ui_put(w, body.y + body.h, r.x, r.w, ST_BOLD, scale_of(a)->fit_line);
    }
    if (n_series(a) > 4 && body.h > 12) { /* the pipeline's footnote, above f's */
        char note[1024];
        pipe_note(a, note, sizeof note);
        body.h--;
        ui_put(w, body.y + body.h, r.x, r.w, ST_SERIES0 + S_PIPE, note);
    }
    int table_h = 1 + n_series(a);
    int both_tall = body.h >= 2 * (table_h + 12);
    int both_wide = body.w >= 150;
    /* with both charts, m picks the throughput chart's model */
    int tput = scale_of(a)->metric == M_BYTES ? M_IPS : scale_of(a)->metric;
    if (both_tall) {
        int ch = (body.h - 2 * table_h - 2) / 2;
        chart(a, w, (rect){body.y, body.x, ch, body.w}, tput);
        numbers(a, w, (rect){body.y + ch, body.x, table_h, body.w}, tput);
        chart(a, w, (rect){body.y + ch + table_h + 1, body.x, ch, body.w}, 1);
        numbers(a, w, (rect){body.y + 2 * ch + table_h + 1, body.x, table_h, body.w}, 1);
    } else if (both_wide) {
        int half = body.w / 2;
        for (int k = 0; k < 2; k++) {
            int m = k ? M_BYTES : tput;
            rect c = {body.y, body.x + k * half, body.h - table_h - 1, half - 2};
            chart(a, w, c, m);
            numbers(a, w, (rect){body.y + c.h + 1, c.x, table_h, half - 2}, m);
        }
    } else {
        rect c = {body.y, body.x, body.h - table_h - 1, body.w};
        chart(a, w, c, scale_of(a)->metric);
        numbers(a, w, (rect){body.y + c.h + 1, body.x, table_h, body.w}, scale_of(a)->metric);
    }
}

static action toggle_metric(app *a, int key)
{
    (void)key;
    static const int next[4] = {[M_IPS] = M_BYTES, [M_BYTES] = M_SIM_IPS, [M_SIM_IPS] = M_MFU, [M_MFU] = M_IPS};
    scale_of(a)->metric = next[scale_of(a)->metric];
    return ACT_REDRAW;
}

static action recompute(app *a, int key)
{
    (void)key;
    scale_drop(a);
    scale_start(a);
    app_set_status(a, 0, "recomputing the rows: %d GPU counts, a cost model and search each", scale_of(a)->n);
    return ACT_REDRAW;
}

/* "GPUs needed for X images/s", answered from the rows: for each strategy
 * the fewest GPUs among the counts shown that reach it, by the chart's
 * model (Eq. 1, or simulated when m shows that). */
static action gpus_for_typed(app *a, const char *text, int arg)
{
    (void)arg;
    scale_state *ss = scale_of(a);
    char *end;
    double want = strtod(text, &end);
    if (end == text || *end || !(want > 0) || !isfinite(want)) {
        app_set_status(a, 1, "images/s wanted: \"%s\" is not a positive number", text);
        return ACT_REDRAW;
    }
    if (!ss->rows || ss->done < ss->n) {
        app_set_status(a, 1, "the scaling rows are still being computed (%d of %d GPU counts); ask again when they are in",
                       ss->rows ? ss->done : 0, ss->rows ? ss->n : 0);
        return ACT_REDRAW;
    }
    int sim = ss->metric == M_SIM_IPS;
    static const int order[5] = {3, 0, 1, 2, S_PIPE}; /* layer-wise first; the pipeline where shown */
    const int ns = n_series(a);
    char msg[320];
    int k = snprintf(msg, sizeof msg, "%.0f img/s (%s) needs:", want, sim ? "simulated" : "Eq. 1");
    for (int j = 0; j < ns; j++) {
        int s = order[j], i = plan_scale_gpus_for(ss->rows, ss->n, s, want, sim);
        if (i >= 0)
            k += snprintf(msg + k, sizeof msg - (size_t)k, " %s %d GPU%s%s", series_name[s], ss->rows[i].gpus,
                          ss->rows[i].gpus == 1 ? "" : "s", j < ns - 1 ? "," : "");
        else
            k += snprintf(msg + k, sizeof msg - (size_t)k, " %s none%s", series_name[s], j < ns - 1 ? "," : "");
        if (k >= (int)sizeof msg) k = (int)sizeof msg - 1;
    }
    snprintf(msg + k, sizeof msg - (size_t)k, " (of up to %d)", ss->rows[ss->n - 1].gpus);
    app_set_status(a, 0, "%s", msg);
    return ACT_REDRAW;
}

/* S: the next axis the rows sweep; each value a cost model and search. */
static action next_axis(app *a, int key)
{
    (void)key;
    scale_drop(a);
    scale_of(a)->axis = (scale_of(a)->axis + 1) % PLAN_SWEEP__COUNT;
    scale_start(a);
    app_set_status(a, 0, "images/s against the %s: %d values, a cost model and search each", axis_name[scale_of(a)->axis],
                   scale_of(a)->n);
    return ACT_REDRAW;
}

static action k_gpus_for(app *a, int key)
{
    (void)key;
    if (scale_of(a)->axis != PLAN_SWEEP_GPUS) {
        app_set_status(a, 1, "GPUs needed for X images/s: on the GPU-count axis (S until it shows GPU counts)");
        return ACT_REDRAW;
    }
    char def[32];
    double now = (*plan_best_eval(a->p)).images_per_s;
    snprintf(def, sizeof def, "%.0f", isfinite(now) && now > 0 ? 2 * now : 1000.0);
    prompt_open(a, PROMPT_FIELD, "Images/s wanted: ", def, gpus_for_typed, 0);
    return ACT_REDRAW;
}

/* ---- f: the largest batch per GPU that fits (fit.h), on a thread ----------
 * in a plan of its own (the session's network, cluster, settings, pins and
 * memory settings at batch 1 per GPU), so the session's plan is not
 * touched: keys work meanwhile and Esc cancels it. */
typedef struct scale_fit {
    plan *p;
    atomic_int cancel, done;
    int rc;
    fit_result r;
    lw_error err;
    pthread_t th;
    double t0;
} scale_fit;

static void *fit_main(void *arg)
{
    scale_fit *f = arg;
    f->rc = fit_largest_batch(f->p, &f->r, &f->err);
    atomic_store(&f->done, 1);
    return NULL;
}

static void fit_free(scale_fit *f)
{
    if (!f) return;
    atomic_store(&f->cancel, 1);
    pthread_join(f->th, NULL);
    plan_free(f->p);
    free(f);
}

/* The session's setting at batch 1 per GPU, its pins carried by config. */
static plan *fit_plan(const app *a, atomic_int *cancel, lw_error *err)
{
    const plan *p = a->p;
    network *net = plan_load_network(a->src.net_name, err);
    profile *prof = NULL;
    if (!net || (plan_profile(p) && a->src.profile_name && !(prof = plan_load_profile(a->src.profile_name, err)))) {
        net_free(net);
        return NULL;
    }
    plan_options po = {.set = *plan_run_settings(p), .mem = *plan_memory_settings_of(p), .cancel = cancel};
    po.set.global_batch = 0;
    po.set.batch_per_gpu = 1;
    plan *q = plan_open(net, cluster_clone(plan_cluster(p)), prof, &po, err);
    if (!q) return NULL;
    plan_set_cancel(q, cancel);
    int L = plan_net(p)->n_layers, n = 0;
    plan_pin *pins = lw_malloc(sizeof *pins * (size_t)(L ? L : 1));
    for (int i = 0; i < L; i++) {
        if (plan_pinned(p)[i] < 0) continue;
        const config *c = plan_config(p, i, plan_pinned(p)[i]);
        for (int k = 0; k < plan_n_configs(q, i); k++)
            if (config_equal(plan_config(q, i, k), c)) pins[n++] = (plan_pin){i, k};
    }
    int rc = n ? plan_apply(q, &(plan_change){.n_pins = n, .pins = pins}, err) : 0;
    free(pins);
    if (rc != 0) {
        plan_free(q);
        return NULL;
    }
    return q;
}

/* The answer, if it is in: the line under the chart and the status. */
static void fit_take(app *a)
{
    scale_state *ss = scale_of(a);
    scale_fit *f = ss->fit;
    if (!f || !atomic_load(&f->done)) return;
    ss->fit = NULL;
    const plan *q = f->p;
    double limit = plan_memory_limit(plan_memory_settings_of(q), plan_cluster(q)) / 1073741824.0;
    if (f->rc != 0) {
        app_set_status(a, strcmp(f->err.msg, "cancelled") != 0, "fit: %s", f->err.msg);
    } else if (f->r.per_gpu == 0) {
        snprintf(ss->fit_line, sizeof ss->fit_line, "fit: nothing fits %.2f GiB per GPU on %d GPUs, even at batch 1 per GPU",
                 limit, plan_gpus(q));
    } else {
        const strategy_eval *ev = plan_best_eval(q);
        snprintf(ss->fit_line, sizeof ss->fit_line,
                 "fit: the largest batch that fits %.2f GiB per GPU on %d GPUs is %ld per GPU%s (global %ld): "
                 "%.2f ms/step, %.0f img/s (Eq. 1), peak %.2f GiB%s",
                 limit, plan_gpus(q), f->r.per_gpu, !f->r.found_hi ? " or more" : f->r.unsettled ? " or a little more" : "",
                 plan_batch(q), ev->total_ms, ev->images_per_s, ev->peak_memory_bytes / 1073741824.0,
                 plan_memory_of(q)->proven_optimal ? "" : " (the best found in the time limit)");
    }
    if (f->rc == 0) app_set_status(a, 0, "%s (%.1f s; e exports it with the chart)", ss->fit_line, lw_now() - f->t0);
    fit_free(f);
}

static action k_fit(app *a, int key)
{
    (void)key;
    scale_state *ss = scale_of(a);
    if (ss->fit) {
        app_set_status(a, 0, "fit: still searching (Esc cancels)");
        return ACT_REDRAW;
    }
    if (!isfinite(plan_memory_limit(plan_memory_settings_of(a->p), plan_cluster(a->p)))) {
        app_set_status(a, 1, "fit needs a memory limit: M sets one");
        return ACT_REDRAW;
    }
    scale_fit *f = lw_calloc(1, sizeof *f);
    atomic_init(&f->cancel, 0);
    atomic_init(&f->done, 0);
    f->t0 = lw_now();
    f->p = fit_plan(a, &f->cancel, &f->err);
    if (!f->p || lw_thread_start(&f->th, fit_main, f) != 0) {
        app_set_status(a, 1, "fit: %s", f->p ? "no thread to run it on" : f->err.msg);
        plan_free(f->p);
        free(f);
        return ACT_REDRAW;
    }
    ss->fit = f;
    ss->fit_line[0] = 0;
    app_set_status(a, 0, "fit: searching for the largest batch per GPU that fits on %d GPUs%s (Esc cancels)",
                   plan_gpus(a->p), G->ellipsis);
    if (!a->workers) /* a test: the answer at once */
        while (!atomic_load(&f->done)) usleep(1000);
    fit_take(a);
    return ACT_REDRAW;
}

/* Esc while fit searches: cancelled; while the worker computes the rows:
 * stopped, those not in yet left empty (r computes them again); else what
 * Esc does everywhere. */
static action k_scale_escape(app *a, int key)
{
    scale_state *ss = scale_of(a);
    if (!ss->fit && ss->pid > 0 && ss->done < ss->n) {
        int done = ss->done;
        scale_stop(a);
        rows_missing(a, "cancelled (r recomputes)");
        app_set_status(a, 0, "scaling: cancelled after %d of %d rows (r recomputes them)", done, ss->n);
        return ACT_REDRAW;
    }
    if (!ss->fit) {
        for (const keybind *b = app_global_keys; b->fn; b++)
            if (b->keys[0] == key) return b->fn(a, key);
        return ACT_NONE;
    }
    fit_free(ss->fit);
    ss->fit = NULL;
    app_set_status(a, 0, "fit: cancelled");
    return ACT_REDRAW;
}

static const keybind scale_keys[] = {
    {{'m', ' '}, "m Space", "next chart: images/s by Eq. 1, bytes moved, images/s simulated, MFU", toggle_metric},
    {{'r'}, "r", "recompute the rows", recompute},
    {{'S'}, "S", "sweep: against GPU count, inter-node bandwidth, batch per GPU, GPUs per node", next_axis},
    {{'G'}, "G", "GPUs needed for X images/s: the fewest GPU counts shown that reach it", k_gpus_for},
    {{'f'}, "f", "fit: the largest batch per GPU at which a strategy fits the memory limit (Esc cancels)", k_fit},
    {{27}, "Esc", "cancels fit's search, or the rows being computed", k_scale_escape},
    {{0}, NULL, NULL, NULL},
};

static void enter_scale(app *a)
{
    if (!scale_of(a)->rows) scale_start(a);
}

static void *scale_new(app *a)
{
    (void)a;
    scale_state *ss = lw_calloc(1, sizeof *ss);
    ss->fd = -1;
    return ss;
}

static void scale_free(app *a, void *st)
{
    scale_stop(a);
    fit_free(((scale_state *)st)->fit);
    free(((scale_state *)st)->rows);
    free(st);
}

/* The rows depend on the settings and the cluster, not on the optimum. */
static void scale_invalidate(app *a, int settings)
{
    /* and on the pipeline settings (the P series): | changes them without new settings */
    const plan_pipe_settings *q = plan_pipe_settings_of(a->p), *was = &scale_of(a)->pipe;
    int pipe_changed = (q->stages > 1 || was->stages > 1) &&
                       (q->stages != was->stages || q->microbatches != was->microbatches || q->schedule != was->schedule ||
                        q->vp != was->vp || q->megatron != was->megatron || q->tp != was->tp);
    if (settings || (pipe_changed && scale_of(a)->rows)) scale_drop(a);
    scale_of(a)->fit_line[0] = 0; /* of another setting (a search under way goes on: it has its own plan) */
}

static int scale_busy(const app *a)
{
    return !scale_of(a)->rows || scale_of(a)->done < scale_of(a)->n || scale_of(a)->fit;
}

static int scale_waiting(const app *a)
{
    return scale_of(a)->pid > 0 || (scale_of(a)->fit && scale_of(a)->done == scale_of(a)->n);
}

static int scale_idle(app *a, double budget_s)
{
    double t0 = lw_now();
    fit_take(a);
    if (!scale_of(a)->rows) scale_start(a);
    if (scale_of(a)->pid > 0) return scale_step(a) || scale_of(a)->fit; /* take what the worker sent */
    while (scale_step(a))
        if (lw_now() - t0 >= budget_s) return 1;
    return scale_of(a)->fit != NULL;
}

/* e: the chart drawn (SVG, PNG, PDF through cairo), both metrics, once every
 * row is in; a plain .json is the strategy (app_export's). */
static void scale_export_name(const app *a, char *buf, size_t n)
{
    snprintf(buf, n, "layerwise-%s-scaling.svg", plan_net(a->p)->name);
}

static int scale_export_file(app *a, const char *path, const char **what, lw_error *err)
{
    if (lw_ends_with_ci(path, ".json")) return 1;
    if (!draw_format_known(path))
        return lw_fail(err, 2, "%s: the scaling chart is drawn as %s; .json: the strategy", path, draw_formats_help());
    scale_state *ss = scale_of(a);
    if (!ss->rows || ss->done < ss->n)
        return lw_fail(err, 1, "the scaling rows are still being computed (%d of %d GPU counts)", ss->rows ? ss->done : 0,
                       ss->rows ? ss->n : 0);
    int n = ss->n, ns = n_series(a); /* the pipeline in each panel but bytes (not counted for it) */
    char (*names)[32] = lw_malloc(sizeof *names * (size_t)n);
    const char **group = lw_malloc(sizeof *group * (size_t)n);
    double *v = lw_malloc(sizeof *v * (size_t)n * 20);
    static const int panel_metric[4] = {M_IPS, M_SIM_IPS, M_BYTES, M_MFU};
    for (int i = 0; i < n; i++) {
        row_label(a, &ss->rows[i], 0, names[i], sizeof names[i]);
        group[i] = names[i];
        for (int pn = 0; pn < 4; pn++)
            for (int k = 0; k < (pn == 2 ? 4 : ns); k++)
                v[pn * 5 * n + i * (pn == 2 ? 4 : ns) + k] = metric(&ss->rows[i], panel_metric[pn], k);
    }
    draw_bars panels[4] = {
        {ns > 4 ? "training throughput, images/s, Eq. 1 (the paper's additive model; like its Figure 7; the pipeline: "
                  "Eq. 1 per stage, pipelined step)"
                : "training throughput, images/s, Eq. 1 (the paper's additive model; like its Figure 7)",
         0, 0, n, group, ns, series_name, v},
        {ns > 4 ? "training throughput, images/s, simulated (communication overlapped; the pipeline micro-batch by "
                  "micro-batch)"
                : "training throughput, images/s, simulated (communication overlapped)",
         0, 0, n, group, ns, series_name, v + 5 * n},
        {"data moved between GPUs per step, log scale (like Figure 8)", 1, 1, n, group, 4, series_name, v + 10 * n},
        {"model FLOPs utilisation (MFU), %, Eq. 1", 0, 0, n, group, ns, series_name, v + 15 * n},
    };
    char title[1600];
    const plan *p = a->p;
    if (ss->axis == PLAN_SWEEP_GPUS)
        snprintf(title, sizeof title, "%s on %s: data, model, OWT and layer-wise parallelism, batch %ld per GPU, %s, %s",
                 plan_net(p)->name, plan_cluster(p)->name, app_batch_per_gpu(a), precision_name(plan_cluster(p)->precision),
                 sync_scheme_name(plan_cluster(p)->sync));
    else
        snprintf(title, sizeof title, "%s on %s, %d GPUs: data, model, OWT and layer-wise against the %s, %s, %s",
                 plan_net(p)->name, plan_cluster(p)->name, plan_gpus(p), axis_name[ss->axis], precision_name(plan_cluster(p)->precision),
                 sync_scheme_name(plan_cluster(p)->sync));
    if (ns > 4) { /* the pipeline's settings, and why a row has none */
        char note[1024];
        pipe_note(a, note, sizeof note);
        size_t k = strlen(title);
        snprintf(title + k, sizeof title - k, "; %s", note);
    }
    if (ss->fit_line[0]) { /* f's answer goes with it */
        size_t k = strlen(title);
        snprintf(title + k, sizeof title - k, "; %s", ss->fit_line);
    }
    *what = "scaling chart";
    int rc = draw_bar_charts(title, panels, 4, path, err);
    free(names);
    free(group);
    free(v);
    return rc;
}

const screen_ops screen_scale_ops = {
    .tab = "Scale",
    .title = "Scaling (4)",
    .hints = "m:metric S:sweep G:GPUs for X img/s f:fit |:pipeline r:recompute e:export",
    .draw = draw_scale,
    .keys = scale_keys,
    .enter = enter_scale,
    .state_new = scale_new,
    .state_free = scale_free,
    .invalidate = scale_invalidate,
    .idle = scale_idle,
    .busy = scale_busy,
    .waiting = scale_waiting,
    .export_name = scale_export_name,
    .export_file = scale_export_file,
    .export_formats = ".svg .png .pdf .json",
};
