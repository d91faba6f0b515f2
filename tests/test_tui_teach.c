/*
 * Headless tests of the views that teach and plan (issue 36): the lecture
 * view (L: per layer, the weights it would sync split by sample against
 * the activations it would move split by channel) and the scaling screen's
 * "GPUs needed for X images/s" (G), rendered into ncurses' in-memory screen.
 */
#include "app.h"
#include "keys.h"
#include "screens.h"
#include "draw.h"
#include "explain.h"
#include "fit.h"
#include "util.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "tui_screen.h"
#include "test_helpers.h"

/* The bar cells of row y: those left of the sync column's value and
 * those right of the move column's value (ASCII mode: '#'). */
static void bars_of(int y, int *left, int *right)
{
    const char *s = row(y);
    int n = (int)strlen(s), mid = n / 2;
    *left = *right = 0;
    for (int i = 0; i < mid; i++) *left += s[i] == '#';
    for (int i = mid; i < n; i++) *right += s[i] == '#';
}

/* The row of layer `name` in the lecture view (its name after the value). */
static int layer_row(const char *name)
{
    char needle[80];
    snprintf(needle, sizeof needle, " %s ", name);
    return find_row(needle);
}

/* The lecture at 80x24 without colour or UTF-8: fc6 would sync far
 * more split by sample than it would move split by channel (it is split by
 * channel); a late convolution the other way round (split by sample); the
 * numbers are the engine's, the foot says them in words. */
Test(tui_lecture, vgg16_sync_by_sample_against_move_by_channel_at_80x24_ascii)
{
    term_open(24, 80, 0);
    app *a = open_app("vgg16", "p100-4x4", 16);
    select_layer(a, "fc6");
    app_feed(a, 'L');
    cr_assert_eq(a->screen, SCR_LECTURE);
    cr_assert_eq(app_base_screen(a), SCR_TABLE, "an overlay over the table");
    ui_cuts_reset();
    draw(a);
    const char *cuts = NULL;
    cr_assert_eq(ui_cuts(&cuts), 0, "text cut mid-word: %s\n%s", cuts, dump());
    cr_assert(find_row("lecture: by sample or by channel?") >= 0, "%s", dump());
    cr_assert(find_row2("synced by sample", "moved by channel") >= 0, "%s", dump());
    int li = net_find(a->p->net, "fc6");
    explain_lecture_row *rows = calloc((size_t)a->p->net->n_layers, sizeof *rows);
    lw_error err = {0};
    cr_assert_eq(explain_lecture(a->p, rows, &err), 0, "%s", err.msg);
    cr_assert_gt(rows[li].sync_bytes, 5 * rows[li].move_bytes, "fc6: the weights outweigh the activations");
    int y = layer_row("fc6"), l, r;
    cr_assert(y >= 0, "%s", dump());
    cr_assert(strstr(row(y), " c4 "), "fc6's chosen config: %s", row(y));
    bars_of(y, &l, &r);
    cr_assert_gt(l, r, "fc6's sync bar is the longer: %s", row(y));
    char b[32], want[128];
    lw_format_bytes(rows[li].sync_bytes, b, sizeof b);
    cr_assert(strstr(row(y), b), "fc6's sync bytes %s: %s", b, row(y));
    snprintf(want, sizeof want, "fc6: as n16 it syncs %s (t_s %.2f ms)", b, rows[li].sync_ms);
    cr_assert(find_row(want) >= 0, "%s\n%s", want, dump());
    /* a convolution: the activations outweigh the weights */
    app_feed(a, KEY_HOME);
    draw(a);
    int ci = net_find(a->p->net, "conv2_2");
    cr_assert_gt(rows[ci].move_bytes, 5 * rows[ci].sync_bytes);
    y = layer_row("conv2_2");
    cr_assert(y >= 0, "%s", dump());
    cr_assert(strstr(row(y), " n16"), "conv2_2 split by sample: %s", row(y));
    bars_of(y, &l, &r);
    cr_assert_gt(r, l, "conv2_2's move bar is the longer: %s", row(y));
    /* i explains the selected row's layer; Esc comes back to the table */
    cr_assert_eq(a->sel, 0);
    app_feed(a, 27);
    cr_assert_eq(a->screen, SCR_TABLE);
    free(rows);
    app_free(a);
    term_close();
}

/* e draws the chart for slides as SVG, PNG and PDF; another extension
 * is refused and nothing is written. */
Test(tui_lecture, exports_svg_png_pdf)
{
    char dir[] = "/tmp/lw-tui-XXXXXX", cwd[4096];
    temp_dir(dir, cwd, sizeof cwd);
    cr_assert_eq(chdir(dir), 0);
    term_open(24, 80, 1);
    app *a = open_app("gpt2", "dgx-a100", 8);
    app_feed(a, 'L');
    static const char *const names[] = {"layerwise-gpt2-lecture.svg", "l.png", "l.pdf"};
    export_each_format(a, "lecture chart", names, "l.dot");
    app_free(a);
    term_close();
    cr_assert_eq(chdir(cwd), 0);
    cr_assert_eq(rmdir(dir), 0, "files left in %s", dir);
}

/* The key is in the generated help. */
Test(tui_lecture, help_lists_L)
{
    term_open(60, 120, 1);
    app *a = open_app("lenet5", "p100-4x4", 4);
    app_feed(a, '?');
    draw(a);
    int found = 0;
    for (int i = 0; i < 40 && !found; i++) {
        found = find_row("lecture: per layer, weights synced by sample") >= 0;
        app_feed(a, KEY_NPAGE);
        draw(a);
    }
    cr_assert(found, "%s", dump());
    app_free(a);
    term_close();
}

/* ---------- scaling: GPUs needed for X images/s (G), r's feedback */

/* The fewest GPUs among the rows whose layer-wise Eq. 1 throughput reaches
 * want, found here independently of the screen; 0: none. */
static int fewest_gpus(const scale_state *ss, double want)
{
    int g = 0;
    for (int i = 0; i < ss->n; i++)
        if (ss->rows[i].ips[3] >= want && (!g || ss->rows[i].gpus < g)) g = ss->rows[i].gpus;
    return g;
}

Test(tui_scale_plan, gpus_needed_for_x_images_per_s)
{
    term_open(24, 80, 1);
    app *a = open_app("alexnet", "p100-4x4", 4);
    app_feed(a, '4');
    cr_assert_eq(a->screen, SCR_SCALE);
    /* before the rows are in: the prompt opens, the answer says to wait */
    app_feed(a, 'G');
    cr_assert_neq(a->prompt.kind, PROMPT_NONE, "G asks for the images/s wanted");
    app_feed(a, '\r');
    if (scale_of(a)->done < scale_of(a)->n)
        cr_assert(a->status_error && strstr(a->status, "still being computed"), "%s", a->status);
    finish_idle(a);
    scale_state *ss = scale_of(a);
    cr_assert_eq(ss->done, ss->n);
    /* exactly what 2 GPUs reach (layer-wise): 2 GPUs, or fewer if one reaches it */
    int two = -1;
    for (int i = 0; i < ss->n; i++)
        if (ss->rows[i].gpus == 2) two = i;
    cr_assert_geq(two, 0);
    double want = floor(ss->rows[two].ips[3]);
    char text[64], need[64];
    snprintf(text, sizeof text, "%.0f", want);
    app_feed(a, 'G');
    app_feed(a, 21 /* ^U */);
    type(a, text);
    app_feed(a, '\r');
    int g = fewest_gpus(ss, want);
    cr_assert(g >= 1 && g <= 2);
    snprintf(need, sizeof need, "%.0f img/s (Eq. 1) needs: layer-wise %d GPU", want, g);
    cr_assert(!a->status_error && strstr(a->status, need), "want \"%s\" in \"%s\"", need, a->status);
    /* more than any count reaches: none */
    app_feed(a, 'G');
    app_feed(a, 21);
    type(a, "1e12");
    app_feed(a, '\r');
    cr_assert(strstr(a->status, "layer-wise none") && strstr(a->status, "(of up to 16)"), "%s", a->status);
    /* not a number */
    app_feed(a, 'G');
    app_feed(a, 21);
    type(a, "x");
    app_feed(a, '\r');
    cr_assert(a->status_error && strstr(a->status, "not a positive number"), "%s", a->status);
    /* r says what it does (issue 36, bug 11: no feedback) */
    app_feed(a, 'r');
    cr_assert(strstr(a->status, "recomputing the rows"), "%s", a->status);
    app_free(a);
    term_close();
}

/* S sweeps one parameter at the plan's GPU count (issue 36, item 3):
 * each row is the plan's setting with that parameter changed, searched
 * anew, and equals what plan_sweep_row_compute gives (checked against a
 * plan built for that setting at the current value); the chart labels
 * the values, the current one marked. */
Test(tui_scale_plan, sweeps_inter_node_bandwidth_batch_and_gpus_per_node)
{
    term_open(30, 100, 1);
    app *a = open_app("alexnet", "p100-4x4", 8);
    app_feed(a, '4');
    finish_idle(a);
    app_feed(a, 'S');
    scale_state *ss = scale_of(a);
    cr_assert_eq(ss->axis, PLAN_SWEEP_INTER_BW);
    cr_assert(strstr(a->status, "against the inter-node bandwidth: 7 values"), "%s", a->status);
    finish_idle(a);
    cr_assert_eq(ss->done, ss->n);
    draw(a);
    cr_assert(find_row("against the inter-node bandwidth (S)") >= 0, "%s", dump());
    cr_assert(find_row("11.5 GB/s") >= 0, "the current bandwidth labelled: %s", dump());
    /* the row at the current bandwidth is the plan's own optimum; more
     * bandwidth never slows layer-wise down */
    int now = -1;
    for (int i = 0; i < ss->n; i++) {
        cr_assert_eq(ss->rows[i].gpus, 8);
        if (fabs(ss->rows[i].x - 11.5) < 1e-9) now = i;
        if (i) cr_assert_geq(ss->rows[i].ips[3], ss->rows[i - 1].ips[3] * (1 - 1e-9), "row %d", i);
    }
    cr_assert_geq(now, 0);
    ASSERT_REL(ss->rows[now].total_ms[3], a->p->best_eval.total_ms, 1e-9);
    cr_assert_gt(ss->rows[ss->n - 1].ips[0], ss->rows[0].ips[0], "data parallelism gains most from bandwidth");
    /* the batch per GPU: 32 now, 4 to 256 */
    app_feed(a, 'S');
    finish_idle(a);
    cr_assert_eq(ss->axis, PLAN_SWEEP_BATCH);
    cr_assert_eq(ss->rows[0].x, 4);
    cr_assert_eq(ss->rows[ss->n - 1].x, 256);
    for (int i = 0; i < ss->n; i++)
        if (ss->rows[i].x == 32) ASSERT_REL(ss->rows[i].total_ms[3], a->p->best_eval.total_ms, 1e-9);
    /* GPUs per node: 1, 2, 4, 8 GPUs a node for the 8 GPUs in use */
    app_feed(a, 'S');
    finish_idle(a);
    cr_assert_eq(ss->axis, PLAN_SWEEP_GPUS_PER_NODE);
    cr_assert_eq(ss->n, 4);
    for (int i = 0; i < ss->n; i++)
        if (ss->rows[i].x == 4) ASSERT_REL(ss->rows[i].total_ms[3], a->p->best_eval.total_ms, 1e-9);
    /* G answers on the GPU axis only */
    app_feed(a, 'G');
    cr_assert(a->status_error && strstr(a->status, "on the GPU-count axis"), "%s", a->status);
    app_feed(a, 'S');
    cr_assert_eq(ss->axis, PLAN_SWEEP_GPUS);
    app_free(a);
    term_close();
}

/* m's fourth chart is the MFU of each strategy's Eq. 1 step (issue 36,
 * item 3: MFU for transformers); at the plan's own GPU count layer-wise's
 * is the context line's. */
Test(tui_scale_plan, mfu_chart_for_a_transformer)
{
    term_open(30, 100, 1);
    app *a = open_app("gpt2", "dgx-a100", 8);
    app_feed(a, '4');
    finish_idle(a);
    for (int i = 0; i < 3; i++) app_feed(a, 'm');
    draw(a);
    cr_assert(find_row("model FLOPs utilisation (MFU), %, Eq. 1") >= 0, "%s", dump());
    cr_assert(find_row("MFU % Eq. 1") >= 0, "%s", dump());
    scale_state *ss = scale_of(a);
    int own = -1;
    for (int i = 0; i < ss->n; i++)
        if (ss->rows[i].gpus == 8) own = i;
    cr_assert_geq(own, 0);
    ASSERT_REL(ss->rows[own].mfu[3], strategy_eval_mfu(&a->p->best_eval), 1e-9);
    char want[32];
    snprintf(want, sizeof want, "%.1f", ss->rows[own].mfu[3] * 100);
    int y = find_last_row("L layer-wise"); /* the numbers, not the legend */
    cr_assert(y >= 0 && strstr(row(y), want), "layer-wise's MFU %s: %s", want, dump());
    app_feed(a, 'm');
    draw(a);
    cr_assert(find_row("training throughput, images/s, Eq. 1") >= 0, "m comes back to images/s: %s", dump());
    app_free(a);
    term_close();
}

/* A long export error names the path once and keeps its reason at 80x24
 * (issue 36, bug 1: the path three times, the reason lost). */
Test(tui_edges36, long_export_error_names_the_path_once)
{
    term_open(24, 80, 1);
    app *a = open_app("lenet5", "p100-4x4", 4);
    static const char *const paths[] = {
        "/nonexistent/a-rather-long-directory-name-for-the-slides/and-another-level-below/lenet5-graph-export.svg",
        "/proc/version-a-rather-long-directory-name-for-the-slides-and-another-level-below-lenet5-export.svg"};
    static const char *const reasons[] = {"does not exist", "No such file or directory"};
    for (int i = 0; i < 2; i++) {
        app_feed(a, 'e');
        app_feed(a, 21 /* ^U */);
        type(a, paths[i]);
        app_feed(a, '\r');
        cr_assert(a->status_error, "%s", a->status);
        const char *end = paths[i] + strlen(paths[i]) - 12; /* the name's end, which the status keeps */
        int n = 0;
        for (const char *q = a->status; (q = strstr(q, end)); q++) n++;
        cr_assert_eq(n, 1, "the path once: %s", a->status);
        draw(a);
        cr_assert(find_row(reasons[i]) >= 0 || strstr(a->status, reasons[i]), "%s", a->status);
        int y = find_row("failed:");
        cr_assert(y >= 0, "%s", dump());
        char screen[1024] = "";
        for (int k = y; k < LINES - 1 && k < y + 3; k++) {
            strncat(screen, row(k), sizeof screen - strlen(screen) - 2);
            strncat(screen, " ", sizeof screen - strlen(screen) - 1);
        }
        cr_assert(strstr(screen, reasons[i]) || strstr(screen, "No such file"), "the reason on screen:\n%s", dump());
    }
    app_free(a);
    term_close();
}

/* Help longer than the screen: the "77-96 of 123" counter has a row of its
 * own and covers no help text (issue 36, bug 1: "0 the whole 77-96 of
 * 123"); paging shows every row once. */
Test(tui_edges36, help_counter_covers_no_text)
{
    term_open(24, 80, 0);
    app *a = open_app("vgg16", "p100-4x4", 16);
    app_feed(a, '?');
    for (int page = 0; page < 12; page++) {
        draw(a);
        int y = -1;
        for (int k = 0; k < LINES; k++) {
            const char *r = row(k);
            const char *of = strstr(r, " of ");
            if (of && strchr(r, '-') && strlen(of) < 12 && isdigit((unsigned char)of[4])) y = k;
        }
        cr_assert(y >= 0, "no counter:\n%s", dump());
        const char *r = row(y);
        while (*r == ' ') r++;
        int a0, a1, n;
        cr_assert_eq(sscanf(r, "%d-%d of %d", &a0, &a1, &n), 3, "the counter's row holds text: \"%s\"\n%s", row(y),
                     dump());
        if (a1 == n) break;
        app_feed(a, KEY_NPAGE);
    }
    app_free(a);
    term_close();
}

/* The context line's images/s names its model, Eq. 1, as its step time
 * does (issue 36, bug 11: after F it read as the simulated figure). */
Test(tui_edges36, context_images_per_s_names_eq1)
{
    term_open(30, 160, 1);
    app *a = open_app("alexnet", "p100-4x4", 8);
    draw(a);
    char want[64];
    snprintf(want, sizeof want, "%.0f img/s (Eq. 1)", a->p->best_eval.images_per_s);
    cr_assert(strstr(row(1), want), "\"%s\" in the context line:\n%s", want, dump());
    app_free(a);
    term_close();
}

/* The final step of VGG-16 (a chain: two nodes joined by one edge are
 * left) says why the folds stop there, not that no node has a single edge
 * (issue 36, bug 11). */
Test(tui_edges36, final_step_of_two_nodes_and_one_edge)
{
    term_open(40, 120, 1);
    app *a = open_app("vgg16", "p100-4x4", 16);
    app_feed(a, '3');
    app_feed(a, 'f');
    draw(a);
    cr_assert(find_row("Two nodes joined by one edge, where the eliminations") >= 0, "%s", dump());
    cr_assert(find_row("single edge to fold") < 0, "%s", dump());
    app_free(a);
    term_close();
}

/* Compare's "previous" across a batch change: a step is not the same work,
 * so the header sets the images/s side by side (issue 36, bug 11: ms only). */
Test(tui_edges36, compare_previous_across_a_batch_change_gives_images_per_s)
{
    term_open(24, 80, 1);
    app *a = open_app("vgg16", "p100-4x4", 16);
    double before = a->p->best_eval.images_per_s;
    app_feed(a, '>');
    double now = a->p->best_eval.images_per_s;
    app_feed(a, 'C');
    for (int k = 0; k < CMP__COUNT && compare_of(a)->src[1] != CMP_PREVIOUS; k++) app_feed(a, 'b');
    cr_assert_eq(compare_of(a)->src[1], CMP_PREVIOUS);
    draw(a);
    char want[96];
    snprintf(want, sizeof want, "images/s A %.0f, B %.0f", now, before);
    char head[512], r2[256]; /* row() returns one buffer: copied a row at a time */
    snprintf(r2, sizeof r2, "%.200s", row(2));
    snprintf(head, sizeof head, "%s %.200s", r2, row(3));
    for (char *s = head; *s; s++) /* the wrap's break reads as a space */
        if (s[0] == ' ' && s[1] == ' ') memmove(s, s + 1, strlen(s));
    cr_assert(strstr(head, "not the same work") && strstr(head, want), "\"%s\" in the header:\n%s", want, dump());
    app_free(a);
    term_close();
}

/* fit inside the TUI (issue 36, item 3): f on the scaling screen answers
 * the largest batch per GPU at which a strategy fits the memory limit, as
 * the engine's fit_largest_batch (the CLI's fit) does for the setting;
 * shown under the chart and on the status line. In the TUI (a->workers)
 * it runs on a thread, in a plan of its own, and Esc cancels it. */
Test(tui_scale_plan, fit_names_the_largest_batch_that_fits, .timeout = 240)
{
    term_open(30, 100, 1);
    app *a = open_app("vgg16", "p100-4x4", 4);
    app_feed(a, '4');
    cr_assert_eq(a->screen, SCR_SCALE);
    app_feed(a, 'f');
    scale_state *ss = scale_of(a);
    cr_assert_null(ss->fit);
    plan *p = open_plan("vgg16", "p100-4x4", 4, 0);
    fit_result fr;
    lw_error err = {0};
    cr_assert_eq(fit_largest_batch(p, &fr, &err), 0, "%s", err.msg);
    cr_assert_gt(fr.per_gpu, 1);
    char want[160], ms[64];
    snprintf(want, sizeof want, "fits 16.00 GiB per GPU on 4 GPUs is %ld per GPU (global %ld): ", fr.per_gpu,
             4 * fr.per_gpu);
    /* the same batch where neither search left a larger batch unsettled in its time (a loaded machine) */
    if (!fr.unsettled && !strstr(ss->fit_line, "a little more")) {
        cr_assert(strstr(ss->fit_line, want), "want \"%s\" in \"%s\"", want, ss->fit_line);
        cr_assert(strstr(a->status, want), "%s", a->status);
    }
    cr_assert(strstr(a->status, "fit: the largest batch that fits 16.00 GiB per GPU on 4 GPUs is ") && !a->status_error,
              "%s", a->status);
    /* the strategy there: the same where both memory searches finished in their time (a loaded machine may
     * stop one early, which the line then says) */
    snprintf(ms, sizeof ms, ": %.2f ms/step", plan_best_eval(p)->total_ms);
    if (plan_memory_of(p)->proven_optimal && !strstr(ss->fit_line, "time limit") && strstr(ss->fit_line, want))
        cr_assert(strstr(ss->fit_line, ms), "want \"%s\" in \"%s\"", ms, ss->fit_line);
    draw(a);
    cr_assert(find_row("fit: the largest batch that fits") >= 0, "shown under the chart:\n%s", dump());
    cr_assert_eq(plan_batch(a->p), 4 * 32, "the session's setting is not touched");
    plan_free(p);
    /* exported with the chart (in its title) */
    char dir[] = "/tmp/lw-tui-XXXXXX", cwd[4096];
    temp_dir(dir, cwd, sizeof cwd);
    cr_assert_eq(chdir(dir), 0);
    finish_idle(a);
    app_feed(a, 'e');
    app_feed(a, '\r');
    cr_assert(!a->status_error && strstr(a->status, "wrote scaling chart"), "%s", a->status);
    cr_assert_eq(unlink("layerwise-vgg16-scaling.svg"), 0);
    cr_assert_eq(chdir(cwd), 0);
    cr_assert_eq(rmdir(dir), 0);
    /* on a thread: the status says so, keys work, Esc cancels */
    a->workers = 1;
    app_feed(a, 'f');
    cr_assert_not_null(ss->fit);
    cr_assert(strstr(a->status, "(Esc cancels)"), "%s", a->status);
    cr_assert(app_busy(a));
    app_feed(a, 'm');
    cr_assert_eq(a->screen, SCR_SCALE);
    app_feed(a, 27);
    cr_assert_null(ss->fit);
    cr_assert(strstr(a->status, "fit: cancelled"), "%s", a->status);
    app_free(a);
    term_close();
}

/* Tried as a new user (issue 36, "How we will know"): "why by channel and
 * not by sample" is answered on explain's first screen at 80x24, before
 * the table and without scrolling: the sentence with the bytes that decide. */
Test(tui_explain, by_channel_not_by_sample_on_the_first_screen_at_80x24)
{
    term_open(24, 80, 0);
    app *a = open_app("vgg16", "p100-4x4", 16);
    select_layer(a, "fc6");
    app_feed(a, 'i');
    draw(a);
    int y = find_row("Why c4 and not data parallelism's n16: n16 keeps 16 replicas");
    cr_assert(y >= 0, "on the first screen:\n%s", dump());
    cr_assert(find_row("syncs them (t_s 214.47 ms); c4 moves 308.3 MB of") > y, "%s", dump());
    cr_assert_lt(y, find_row("* c4 "), "before the table:\n%s", dump());
    app_free(a);
    term_close();
}
