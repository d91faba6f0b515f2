/*
 * Screen tests of the TUI's rough edges (issue 13's "Bugs found" and the
 * habits of htop, tig and less users): each test drives the app through the
 * keys the event loop hands it and reads the headless screen back
 * (tui_screen.h), and each fails on the behaviour it replaced.
 */
#include "app.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "keys.h"
#include "screens.h"
#include "cli.h"
#include "draw.h"
#include "draw_cairo.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tui_screen.h"

#define CTRL_U_KEY 0x15

/* ---------- bug 1: `tui` honours every shared option */

static app *probed;

/* Stands in for the TUI: opens the app with what cli_main passes, as
 * tui_main does, and keeps it for the test to look at. */
static int tui_probe(const tui_args *t)
{
    lw_error err = {0};
    probed = app_open(t, &err);
    cr_assert_not_null(probed, "app_open: %s", err.msg);
    return 0;
}

Test(tui_edges, tui_command_passes_every_shared_option)
{
    char *argv[] = {"layerwise", "tui",    "-n",           "vgg16",  "-c",         "dgx1-v100", "-g",
                    "8",         "--inter-bw", "1.5",      "--intra-bw", "7",      "--pin",    "fc6=n8",
                    "--sync",    "ring",   "--precision",  "fp16",   "--bucket-mb", "5",       "--memory-limit",
                    "12GiB",     "--optimizer", "adam",    "--batch-per-gpu", "16", NULL};
    int argc = (int)(sizeof argv / sizeof argv[0]) - 1;
    cr_assert_eq(cli_main(argc, argv, tui_probe), 0);
    app *a = probed;
    const plan *p = a->p;
    cr_assert_eq(p->gpus, 8);
    cr_assert_float_eq(p->cl->inter.bandwidth_gbs, 1.5, 1e-12, "--inter-bw: %g", p->cl->inter.bandwidth_gbs);
    cr_assert_float_eq(p->cl->intra.bandwidth_gbs, 7.0, 1e-12, "--intra-bw: %g", p->cl->intra.bandwidth_gbs);
    int fc6 = net_find(p->net, "fc6");
    cr_assert(fc6 >= 0 && p->pinned[fc6] >= 0, "--pin fc6=n8 did not pin fc6");
    char cb[32];
    config_format(&p->cm->configs[fc6][p->best[fc6]], cb, sizeof cb);
    cr_assert_str_eq(cb, "n8", "fc6 runs %s, pinned n8", cb);
    cr_assert_eq(p->cl->sync, SYNC_RING_ALLREDUCE);
    cr_assert_eq(p->cl->precision, PREC_FP16);
    cr_assert_float_eq(p->cl->coll.bucket_mb, 5.0, 1e-12);
    cr_assert_float_eq(p->mset.limit, 12.0 * 1073741824.0, 1.0);
    cr_assert_eq(p->mset.optimizer, OPT_ADAM);
    cr_assert_eq(app_batch_per_gpu(a), 16);
    app_free(a);
}

Test(tui_edges, tui_command_refuses_options_it_cannot_use)
{
    static const char *const opts[][2] = {{"--json", NULL}, {"-o", "x.json"}, {"--view", "graph"}, {"--steps", NULL}};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        char *argv[] = {"layerwise", "tui", (char *)opts[i][0], (char *)opts[i][1], NULL};
        int argc = opts[i][1] ? 4 : 3;
        probed = NULL;
        cr_assert_eq(cli_main(argc, argv, tui_probe), 2, "tui %s was not refused", opts[i][0]);
        cr_assert_null(probed);
    }
}

Test(tui_edges, tui_pin_of_an_unknown_layer_is_bad_input)
{
    lw_error err = {0};
    tui_args t = {0};
    t.sync = -1;
    const char *pins[] = {"fc99=n4"};
    t.pins = pins;
    t.n_pins = 1;
    cr_assert_null(app_open(&t, &err));
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "fc99"), "%s", err.msg);
}

/* ---------- bug 9: prompts, q, the export's file, a small terminal */

Test(tui_edges, gpu_prompt_zero_names_the_range)
{
    term_open(24, 80, 1);
    app *a = open_app("vgg16", "p100-4x4", 4);
    type(a, "g");
    app_feed(a, CTRL_U_KEY);
    type(a, "0\r");
    cr_assert_eq(a->p->gpus, 4);
    cr_assert(a->status_error);
    cr_assert(strstr(a->status, "1 to 16") && !strstr(a->status, "not a whole number"), "%s", a->status);
    type(a, "g");
    app_feed(a, CTRL_U_KEY);
    type(a, "abc\r");
    cr_assert(strstr(a->status, "\"abc\" is not a whole number (1 to 16)"), "%s", a->status);
    app_free(a);
    term_close();
}

Test(tui_edges, q_closes_help_and_why_not_before_it_quits)
{
    term_open(24, 80, 1);
    app *a = open_app("lenet5", "p100-4x4", 4);
    type(a, "2?");
    cr_assert_eq(a->screen, SCR_HELP);
    cr_assert_eq(app_feed(a, 'q'), ACT_REDRAW);
    cr_assert_not(a->quit);
    cr_assert_eq(a->screen, SCR_GRAPH, "q on help went to %d", a->screen);
    type(a, "w");
    cr_assert_eq(a->screen, SCR_WHYNOT);
    app_feed(a, 'q');
    cr_assert_not(a->quit);
    cr_assert_eq(a->screen, SCR_GRAPH);
    draw(a);
    cr_assert(strstr(row(LINES - 1), "q quit"), "%s", row(LINES - 1));
    type(a, "?");
    draw(a);
    cr_assert(strstr(row(LINES - 1), "q close"), "help's hint: %s", row(LINES - 1));
    type(a, "?");
    cr_assert_eq(app_feed(a, 'q'), ACT_QUIT);
    cr_assert(a->quit);
    app_free(a);
    term_close();
}

/* A scratch directory for export tests, removed by the caller. */
static void scratch_dir(char *buf, size_t n)
{
    snprintf(buf, n, "%s/lw-edges-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert_not_null(mkdtemp(buf));
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void export_prompt(app *a, const char *path)
{
    type(a, "J");
    cr_assert_eq(a->prompt.kind, PROMPT_JSON);
    app_feed(a, CTRL_U_KEY);
    type(a, path);
    app_feed(a, '\r');
}

Test(tui_edges, export_asks_before_it_overwrites)
{
    term_open(24, 80, 1);
    char dir[PATH_MAX], path[PATH_MAX + 32];
    scratch_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/s.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("keep me\n", f);
    fclose(f);
    app *a = open_app("lenet5", "p100-4x4", 4);
    export_prompt(a, path);
    cr_assert_eq(a->prompt.kind, PROMPT_OVERWRITE, "no question before writing over %s: %s", path, a->status);
    draw(a);
    cr_assert(find_row("overwrite it? (y/n)") == LINES - 2, "%s", dump());
    cr_assert(strstr(row(LINES - 1), "y overwrite"), "%s", row(LINES - 1));
    app_feed(a, 'x'); /* not an answer */
    cr_assert_eq(a->prompt.kind, PROMPT_OVERWRITE);
    app_feed(a, 'n');
    cr_assert_eq(a->prompt.kind, PROMPT_NONE);
    cr_assert_eq(file_size(path), 8, "n wrote the file");
    cr_assert(strstr(a->status, "not written"), "%s", a->status);
    /* q answers no too, and does not quit */
    export_prompt(a, path);
    cr_assert_eq(app_feed(a, 'q'), ACT_REDRAW);
    cr_assert_not(a->quit);
    cr_assert_eq(file_size(path), 8);
    export_prompt(a, path);
    app_feed(a, 'y');
    cr_assert_eq(a->prompt.kind, PROMPT_NONE);
    cr_assert(file_size(path) > 100, "y did not write: %s", a->status);
    cr_assert(strstr(a->status, "wrote strategy JSON"), "%s", a->status);
    /* a new name is written without a question */
    char fresh[PATH_MAX + 32];
    snprintf(fresh, sizeof fresh, "%s/new.json", dir);
    export_prompt(a, fresh);
    cr_assert_eq(a->prompt.kind, PROMPT_NONE);
    cr_assert(file_size(fresh) > 100, "%s", a->status);
    app_free(a);
    unlink(path);
    unlink(fresh);
    rmdir(dir);
    term_close();
}

Test(tui_edges, export_prompt_expands_the_home_directory)
{
    term_open(24, 80, 1);
    char dir[PATH_MAX], want[PATH_MAX + 32];
    scratch_dir(dir, sizeof dir);
    setenv("HOME", dir, 1);
    app *a = open_app("lenet5", "p100-4x4", 4);
    export_prompt(a, "~/lenet.json");
    snprintf(want, sizeof want, "%s/lenet.json", dir);
    cr_assert(file_size(want) > 100, "~ not expanded: %s", a->status);
    cr_assert(access("~", F_OK) != 0, "a directory named ~ was made");
    export_prompt(a, "~no-such-user-here/x.json");
    cr_assert(a->status_error && strstr(a->status, "~no-such-user-here"), "%s", a->status);
    app_free(a);
    unlink(want);
    rmdir(dir);
    term_close();
}

/* The open picker's and compare's typed paths read ~ as the export prompt
 * does (a shell's reading): a strategy written to ~/x opens as ~/x. */
Test(tui_edges, open_and_compare_prompts_expand_the_home_directory)
{
    term_open(24, 80, 1);
    char dir[PATH_MAX], want[PATH_MAX + 32];
    scratch_dir(dir, sizeof dir);
    setenv("HOME", dir, 1);
    app *a = open_app("lenet5", "p100-4x4", 4);
    export_prompt(a, "~/lenet.json");
    snprintf(want, sizeof want, "%s/lenet.json", dir);
    cr_assert(file_size(want) > 100, "%s", a->status);
    /* compare: B from ~/lenet.json */
    app_feed(a, 'C');
    cr_assert_eq(a->screen, SCR_COMPARE);
    app_feed(a, 'f');
    cr_assert_eq(a->prompt.kind, PROMPT_STRATEGY);
    app_feed(a, CTRL_U_KEY);
    type(a, "~/lenet.json");
    app_feed(a, '\r');
    cr_assert(!a->status_error && strstr(a->status, "compare: B is ") && strstr(a->status, want),
              "compare did not read ~/lenet.json: %s", a->status);
    app_feed(a, 27);
    /* open: a strategy file from ~/lenet.json pins every layer */
    open_prompt(a, OPEN_STRATEGY, "Strategy file: ");
    type(a, "~/lenet.json");
    cr_assert_eq(app_feed(a, '\r'), ACT_RESEARCH, "%s", a->status);
    cr_assert(!a->status_error && strstr(a->status, "every layer pinned") && strstr(a->status, want), "%s",
              a->status);
    open_prompt(a, OPEN_STRATEGY, "Strategy file: ");
    type(a, "~no-such-user-here/x.json");
    app_feed(a, '\r');
    cr_assert(a->status_error && strstr(a->status, "open: cannot expand") && strstr(a->status, "~no-such-user-here"),
              "%s", a->status);
    cr_assert(access("~", F_OK) != 0, "a file named ~ was looked for");
    app_free(a);
    unlink(want);
    rmdir(dir);
    term_close();
}

/* Search and undo work on every screen; the hint bar says so where the
 * screen's own hints leave room, and never at their expense. */
Test(tui_edges, hint_bar_names_search_and_undo_where_there_is_room)
{
    term_open(30, 160, 1);
    app *a = open_app("lenet5", "p100-4x4", 4);
    draw(a);
    const char *last = row(29);
    cr_assert(strstr(last, "z/Z undo/redo") && strstr(last, "/ find"), "%s", last);
    cr_assert(strstr(last, "e export") && strstr(last, "? help q quit"), "%s", last);
    app_feed(a, 'i'); /* an overlay: its own keys only */
    draw(a);
    cr_assert(!strstr(row(29), "z/Z undo"), "%s", row(29));
    app_feed(a, 27);
    app_free(a);
    term_close();
    term_open(24, 80, 1);
    a = open_app("lenet5", "p100-4x4", 4);
    draw(a);
    last = row(23);
    cr_assert(!strstr(last, "undo"), "no room at 80 columns: %s", last);
    cr_assert(strstr(last, "i explain"), "the screen's own hints first: %s", last);
    app_free(a);
    term_close();
}

/* R on the cluster screen resets to the cluster of the state shown: after
 * an undo past a cluster opened with O, that is the one before it again. */
Test(tui_edges, reset_after_undoing_an_opened_cluster)
{
    term_open(24, 80, 1);
    app *a = open_app("alexnet", "p100-4x4", 16);
    app_perform(a, app_open_file(a, OPEN_CLUSTER, "workstation-4x-pcie"));
    cr_assert_str_eq(a->p->cl->name, "workstation-4x-pcie", "%s", a->status);
    app_feed(a, 'z');
    cr_assert_str_eq(a->p->cl->name, "p100-4x4", "%s", a->status);
    app_open_screen(a, SCR_CLUSTER);
    app_feed(a, 'R');
    cr_assert_str_eq(a->p->cl->name, "p100-4x4", "R went to the undone cluster: %s", a->status);
    cr_assert_eq(a->p->gpus, 16);
    app_feed(a, 'Z'); /* redo: the opened cluster, and R resets to it again */
    cr_assert_str_eq(a->p->cl->name, "workstation-4x-pcie", "%s", a->status);
    app_feed(a, 'R');
    cr_assert_str_eq(a->p->cl->name, "workstation-4x-pcie", "%s", a->status);
    app_free(a);
    term_close();
}

Test(tui_edges, keys_do_nothing_while_the_terminal_is_too_small)
{
    term_open(20, 60, 1);
    app *a = open_app("lenet5", "p100-4x4", 4);
    draw(a);
    cr_assert(find_row("Terminal too small") >= 0, "%s", dump());
    int gpus = a->p->gpus;
    cr_assert_eq(app_feed(a, '-'), ACT_NONE);
    cr_assert_eq(app_feed(a, '2'), ACT_NONE);
    cr_assert_eq(app_feed(a, 'g'), ACT_NONE);
    cr_assert_eq(a->p->gpus, gpus);
    cr_assert_eq(a->screen, SCR_TABLE);
    cr_assert_eq(a->prompt.kind, PROMPT_NONE);
    /* it grows: keys work again */
    term_resize(24, 80);
    app_feed(a, KEY_RESIZE);
    draw(a);
    app_feed(a, '2');
    cr_assert_eq(a->screen, SCR_GRAPH);
    /* and shrinks: q still quits */
    term_resize(10, 40);
    draw(a);
    cr_assert_eq(app_feed(a, 'q'), ACT_QUIT);
    app_free(a);
    term_close();
}

/* ---------- bug 10: a what-if that changes the batch leads with images/s */

Test(tui_edges, batch_whatif_status_leads_with_throughput)
{
    term_open(24, 80, 1);
    app *a = open_app("vgg16", "p100-4x4", 4);
    app_feed(a, '>');
    char lead[64];
    snprintf(lead, sizeof lead, "batch 32%s64 per GPU: ", G->arrow_right);
    cr_assert(strncmp(a->status, lead, strlen(lead)) == 0, "%s", a->status);
    const char *after = a->status + strlen(lead);
    const char *ips = strstr(a->status, "img/s"), *ms = strstr(a->status, "ms/step");
    cr_assert(ips && ms && ips < ms, "images/s must come first: %s", a->status);
    double i0, i1, pct;
    cr_assert_eq(sscanf(after, "%lf %*s %lf img/s (%lf%%)", &i0, &i1, &pct), 3, "%s", a->status);
    cr_assert(i1 > i0 && pct > 0, "throughput rose, so the change is positive: %s", a->status);
    /* s keeps the batch: ms/step leads */
    app_feed(a, 's');
    ips = strstr(a->status, "img/s");
    ms = strstr(a->status, "ms/step");
    cr_assert(ips && ms && ms < ips, "%s", a->status);
    app_free(a);
    term_close();
}

/* ---------- bug 5: no line ends mid-word at 80x24 */

/* Draws the frame and adds what ui_put cut inside a word to log. */
static int cuts_of_frame(app *a, const char *what, char *log, size_t n)
{
    ui_cuts_reset();
    draw(a);
    const char *l;
    int c = ui_cuts(&l);
    if (c) {
        size_t k = strlen(log);
        snprintf(log + k, n - k, "-- %s (%d):\n%s", what, c, l);
    }
    return c;
}

/* Every screen, and the states that put the longest text on them. */
static int cuts_everywhere(app *a, const char *name, char *log, size_t n)
{
    int total = 0;
    char what[160];
#define FRAME(desc)                                                                                                \
    do {                                                                                                           \
        snprintf(what, sizeof what, "%s: %s", name, desc);                                                         \
        total += cuts_of_frame(a, what, log, n);                                                                   \
    } while (0)
    type(a, "1");
    FRAME("table");
    type(a, "b");
    FRAME("table with a baseline");
    type(a, "bbb");
    type(a, "2");
    FRAME("graph");
    type(a, "3");
    FRAME("stepper, first step");
    for (int i = 0; i < 6; i++) app_feed(a, KEY_RIGHT);
    FRAME("stepper, step 6");
    app_feed(a, KEY_END);
    FRAME("stepper, last step");
    type(a, "4");
    finish_idle(a);
    FRAME("scale");
    type(a, "5");
    FRAME("cluster");
    type(a, "6");
    FRAME("timeline");
    type(a, "1w");
    finish_idle(a);
    FRAME("why-not");
    app_feed(a, 27);
    type(a, "?");
    for (int i = 0; i < 12; i++) {
        snprintf(what, sizeof what, "%s: help page %d", name, i + 1);
        total += cuts_of_frame(a, what, log, n);
        app_feed(a, KEY_NPAGE);
    }
    app_feed(a, 27);
    type(a, "O");
    FRAME("open picker");
    app_feed(a, 27);
    type(a, "/conv");
    FRAME("search prompt");
    app_feed(a, '\r');
    FRAME("after a search");
    type(a, "e");
    FRAME("export prompt");
    app_feed(a, 27);
    type(a, "-");
    FRAME("status after a what-if");
    type(a, ">");
    FRAME("status after a batch what-if");
#undef FRAME
    return total;
}

Test(tui_edges, every_screen_at_80x24_keeps_words_whole, .timeout = 120)
{
    term_open(24, 80, 1);
    static const struct {
        const char *net, *cl;
        int gpus;
    } runs[] = {{"vgg16", "p100-4x4", 16}, {"inception_v3", "p100-4x4", 16}, {"lenet5", "workstation-4x-pcie", 4},
                {"resnet50", "dgx-a100", 8}};
    static char log[16384];
    log[0] = 0;
    int total = 0;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        app *a = open_app(runs[i].net, runs[i].cl, runs[i].gpus);
        total += cuts_everywhere(a, runs[i].net, log, sizeof log);
        app_free(a);
    }
    cr_assert_eq(total, 0, "%d lines end mid-word at 80x24:\n%s", total, log);
    term_close();
}

/* ---------- bug 2: a pin survives a GPU count that lacks its config */

Test(tui_edges, pins_are_held_while_the_gpu_count_lacks_their_config)
{
    term_open(24, 80, 1);
    app *a = open_app("vgg16", "p100-4x4", 16);
    int fc6 = net_find(a->p->net, "fc6"), k = config_index(a, "fc6", "c16");
    app_perform(a, app_pin(a, fc6, k));
    cr_assert_eq(a->p->pinned[fc6], k);
    /* 8 GPUs have no c16: the pin is held, and the status says so */
    app_feed(a, '-');
    cr_assert_eq(a->p->gpus, 8);
    cr_assert_eq(plan_pin_count(a->p), 0);
    cr_assert(strstr(a->status, "pin fc6 = c16 on hold"), "%s", a->status);
    draw(a);
    cr_assert(strstr(row(1), "1 pin on hold"), "context: %s", row(1));
    /* back on 16 GPUs the pin is back, within the what-if's one search
     * (the plan holds it: no second plan_apply to put it back) */
    long searches = plan_search_count(a->p);
    app_feed(a, '+');
    cr_assert_eq(a->p->gpus, 16);
    cr_assert_eq(plan_search_count(a->p) - searches, 1, "%ld searches for one what-if with a pin on hold",
                 plan_search_count(a->p) - searches);
    k = config_index(a, "fc6", "c16");
    cr_assert(k >= 0 && a->p->pinned[fc6] == k, "fc6's pin did not come back: %s", a->status);
    cr_assert(strstr(a->status, "1 pin back"), "%s", a->status);
    char cb[32];
    config_format(&a->p->cm->configs[fc6][a->p->best[fc6]], cb, sizeof cb);
    cr_assert_str_eq(cb, "c16");
    /* a held pin goes with X like any other */
    app_feed(a, '-');
    cr_assert_eq(app_pins_held(a), 1);
    app_feed(a, 'X');
    cr_assert_eq(app_pins_held(a), 0);
    app_feed(a, '+');
    cr_assert_eq(plan_pin_count(a->p), 0);
    app_free(a);
    term_close();
}

/* ---------- bug 3: the TUI warns, as the CLI does, when nothing fits */

Test(tui_edges, out_of_memory_is_said_on_the_status_and_context_lines)
{
    term_open(24, 80, 1);
    tui_args t = {.net = "vgg16", .cluster = "p100-4x4", .set = {.gpus = 4, .batch_per_gpu = 512}, .sync = -1};
    lw_error err = {0};
    app *a = app_open(&t, &err);
    cr_assert_not_null(a, "%s", err.msg);
    cr_assert(a->status_error, "%s", a->status);
    cr_assert(strstr(a->status, "DOES NOT FIT: needs ") && strstr(a->status, "GiB per GPU of 16.00"), "%s", a->status);
    draw(a);
    cr_assert(strstr(row(1), "needs ") || strstr(row(1), "over memory"), "context: %s", row(1));
    /* the status row is in the error style */
    int sy = find_last_row("DOES NOT FIT");
    cr_assert(sy >= LINES - 4, "%s", dump());
    /* a what-if into memory says so too; one out of it does not */
    app_feed(a, '<');
    app_feed(a, '<');
    app_feed(a, '<');
    app_feed(a, '<');
    cr_assert_eq(app_batch_per_gpu(a), 32);
    cr_assert_not(a->status_error, "%s", a->status);
    cr_assert_null(strstr(a->status, "DOES NOT FIT"), "%s", a->status);
    app_feed(a, '>');
    app_feed(a, '>');
    app_feed(a, '>');
    app_feed(a, '>');
    cr_assert(a->status_error && strstr(a->status, "DOES NOT FIT"), "%s", a->status);
    app_free(a);
    term_close();
}

/* ---------- bug 4: what the strategy uses, not only what it was given */

Test(tui_edges, idle_gpus_are_stated_in_header_cluster_and_status)
{
    term_open(24, 100, 1);
    app *a = open_app("lenet5", "p100-4x4", 16);
    int used = a->p->best_eval.gpus_used;
    cr_assert(used > 0 && used < 16, "LeNet-5 uses %d of 16", used);
    draw(a);
    char want[64];
    snprintf(want, sizeof want, "16/16 GPUs (%d used)", used);
    cr_assert(strstr(row(1), want), "context: %s", row(1));
    type(a, "5");
    draw(a);
    snprintf(want, sizeof want, "GPUs: 16 given, %d used", used);
    cr_assert(find_row(want) >= 0, "%s", dump());
    /* node 0's first `used` GPUs are filled, the rest of the 16 marked idle */
    int ny = find_row("node 0");
    cr_assert(ny >= 0);
    const char *r0 = strstr(row(ny), "node 0") + 8;
    int on = 0, idle = 0;
    for (const char *q = r0; *q; q++) {
        if (strncmp(q, G->gpu_on, strlen(G->gpu_on)) == 0) on++;
        if (strncmp(q, G->gpu_idle, strlen(G->gpu_idle)) == 0) idle++;
    }
    cr_assert_eq(on, used, "%s", row(ny));
    cr_assert_eq(idle, 4 - used, "%s", row(ny));
    cr_assert(find_row("idle") >= 0 && find_row("not given") >= 0, "legend:\n%s", dump());
    /* a what-if's status says how many are used */
    type(a, "-");
    snprintf(want, sizeof want, "of the 8 GPUs used");
    cr_assert(strstr(a->status, want), "%s", a->status);
    app_free(a);
    term_close();
}

/* ---------- bug 5: a long status (an export error) is wrapped, not cut */

Test(tui_edges, export_error_at_120_columns_is_shown_whole)
{
    term_open(30, 120, 1);
    app *a = open_app("lenet5", "p100-4x4", 4);
    type(a, "J");
    app_feed(a, CTRL_U_KEY);
    type(a, "/nonexistent-directory-with-a-rather-long-name/and/a/deeper/folder/for/the/strategy-of-lenet5.json");
    app_feed(a, '\r');
    cr_assert(a->status_error);
    ui_cuts_reset();
    draw(a);
    const char *log;
    cr_assert_eq(ui_cuts(&log), 0, "%s\n%s", log, dump());
    int sy = find_row("export to ");
    cr_assert(sy > 0, "%s", dump());
    char shown[16384] = "";
    for (int y = sy; y < LINES - 1; y++) {
        if (y > sy) strcat(shown, " ");
        strcat(shown, row(y));
    }
    cr_assert_str_eq(shown, a->status, "%s", dump());
    app_free(a);
    term_close();
}

/* Issue 31: an export error for a path of about 240 characters named the
 * path (and its directory) in full, and the reason fell off the end of the
 * status line's three rows at 80 columns. The path is shortened in its
 * middle; the reason stays. */
Test(tui_edges, export_error_for_a_240_character_path_keeps_its_reason)
{
    term_open(24, 80, 1);
    app *a = open_app("lenet5", "p100-4x4", 4);
    char path[256] = "/nonexistent-directory-";
    while (strlen(path) < 225) strcat(path, "abcdefghij");
    strcat(path, "/strategy.json");
    cr_assert(strlen(path) >= 235 && strlen(path) < sizeof a->prompt.buf, "%zu", strlen(path));
    type(a, "J");
    app_feed(a, CTRL_U_KEY);
    type(a, path);
    app_feed(a, '\r');
    cr_assert(a->status_error, "%s", a->status);
    ui_cuts_reset();
    draw(a);
    const char *log;
    cr_assert_eq(ui_cuts(&log), 0, "%s\n%s", log, dump());
    int sy = find_row("export to ");
    cr_assert(sy > 0, "%s", dump());
    char shown[16384] = "";
    for (int y = sy; y < LINES - 1; y++) {
        if (y > sy) strcat(shown, " ");
        strcat(shown, row(y));
    }
    /* the whole status, and in it the reason (the directory is missing) */
    cr_assert_str_eq(shown, a->status, "%s", dump());
    cr_assert(strstr(shown, strerror(ENOENT)) || strstr(shown, "does not exist"), "the reason is not on screen:\n%s",
              dump());
    cr_assert(strstr(shown, "/nonexistent-directory-") && strstr(shown, "strategy.json"),
              "the path's start and end are not on screen:\n%s", dump());
    app_free(a);
    term_close();
}

/* Issue 31: a profile made for another precision is refused at open, and
 * the what-if P to another precision leaves it out of the model (the
 * status says so) until P comes back to its precision. */
Test(tui_edges, a_profile_follows_the_precision_what_if)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    scratch_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/p.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"format\": \"layerwise-profile/1\", \"gpu\": \"Tesla V100-SXM2-32GB\", \"precision\": \"fp32\","
          " \"entries\": [{\"type\": \"relu\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4],"
          " \"forward_ms\": 1, \"backward_ms\": 1}]}",
          f);
    fclose(f);
    lw_error err = {0};
    tui_args t = {.net = "lenet5", .cluster = "dgx1-v100", .profile = path, .set = {2, 0, 0}, .sync = -1,
                  .precision_set = 1, .precision = PREC_FP16};
    cr_assert_null(app_open(&t, &err), "an fp32 profile opened at fp16");
    cr_assert(err.code == 2 && strstr(err.msg, path) && strstr(err.msg, "at fp32") && strstr(err.msg, "at fp16"), "%s",
              err.msg);
    term_open(24, 80, 1);
    t.precision_set = 0; /* the cluster's own, fp32 */
    app *a = app_open(&t, &err);
    cr_assert_not_null(a, "%s", err.msg);
    cr_assert_not_null(a->p->cm->prof);
    type(a, "P");
    finish_idle(a);
    cr_assert_eq(a->p->cl->precision, PREC_FP16);
    cr_assert_null(a->p->cm->prof, "the fp32 profile is applied at fp16");
    cr_assert(strstr(a->status, "profile is not used"), "%s", a->status);
    type(a, "P");
    finish_idle(a);
    cr_assert_eq(a->p->cl->precision, PREC_FP32);
    cr_assert_not_null(a->p->cm->prof);
    cr_assert(strstr(a->status, "profile applies again"), "%s", a->status);
    app_free(a);
    term_close();
    unlink(path);
    rmdir(dir);
}

/* ---------- bug 6: the stepper's next node is reversed, as it says */

/* The cell of the box of layer `name` (its top border's name) on screen. */
static int box_of(const char *name, int *y, int *x)
{
    char pat[96];
    snprintf(pat, sizeof pat, "%s%s", "─", name);
    for (int yy = 0; yy < LINES; yy++) {
        const char *r = row(yy), *p = strstr(r, pat);
        if (!p) continue;
        /* columns: count code points before p (the rows are UTF-8) */
        int col = 0;
        for (const char *q = r; q < p; q++) col += ((unsigned char)*q & 0xC0) != 0x80;
        *y = yy;
        *x = col + 1;
        return 0;
    }
    return -1;
}

Test(tui_edges, stepper_next_node_is_reversed_in_colour_too)
{
    term_open(40, 160, 1);
    ui_styles_init(1); /* colours on: the selection style is not reversed there */
    cr_assert(ui_has_color(), "the in-memory xterm-256color has colours");
    app *a = open_app("vgg16", "p100-4x4", 4);
    type(a, "3");
    const search_result *r = a->p->sr;
    int checked = 0;
    for (int k = 0; k < r->n_steps && checked < 3; k++) {
        const elim_step *nx = &r->steps[steps_of(a)->step];
        if (nx->kind != ELIM_EDGE) { /* VGG-16's chain: folds, layer by layer */
            draw(a);
            char want[160];
            if (nx->kind == ELIM_FOLD)
                snprintf(want, sizeof want, "Next: fold of %s into %s (reversed).", a->p->net->layers[nx->node].name,
                         a->p->net->layers[nx->into].name);
            else
                snprintf(want, sizeof want, "Next: node elimination of %s (reversed).",
                         a->p->net->layers[nx->node].name);
            cr_assert(find_row(want) >= 0, "%s", dump());
            int y, x;
            if (box_of(a->p->net->layers[nx->node].name, &y, &x) == 0) {
                cr_assert(attr_at(y, x) & A_REVERSE, "%s's box is not reversed (row %d col %d)\n%s",
                          a->p->net->layers[nx->node].name, y, x, dump());
                cr_assert(attr_at(y + 1, x + 1) & A_REVERSE, "inside %s's box", a->p->net->layers[nx->node].name);
                checked++;
            }
        }
        app_feed(a, KEY_RIGHT);
    }
    cr_assert(checked > 0, "no next node was in view");
    app_free(a);
    term_close();
}

/* box_of for a name the box may cut ("mixed_5b/branch5x5_1_re…"). */
static int box_of_cut(const char *name, int *y, int *x)
{
    if (box_of(name, y, x) == 0) return 0;
    char cut[128];
    for (int n = (int)strlen(name) - 1; n >= 6; n--) {
        snprintf(cut, sizeof cut, "%.*s…", n, name);
        if (box_of(cut, y, x) == 0) return 0;
    }
    return -1;
}

/* Issue 36, bug 6: stepping through Inception-v3 on 8 GPUs, the next
 * node's reversed box stays in view (at step 34 it was off screen), and a
 * next edge elimination reverses its two ends. */
Test(tui_edges, stepper_keeps_the_next_node_in_view)
{
    term_open(24, 80, 1);
    app *a = open_app("inception_v3", "p100-4x4", 8);
    type(a, "3");
    const search_result *r = a->p->sr;
    int checked = 0, edges = 0;
    for (int k = 0; k < r->n_steps && k < 80; k++) {
        const elim_step *nx = &r->steps[steps_of(a)->step];
        draw(a);
        int id = nx->kind != ELIM_EDGE ? nx->node : nx->to, y, x;
        cr_assert_eq(box_of_cut(a->p->net->layers[id].name, &y, &x), 0, "step %d: %s's box is off screen\n%s", k,
                     a->p->net->layers[id].name, dump());
        cr_assert(attr_at(y + 1, x + 1) & A_REVERSE, "step %d: %s's box is not reversed\n%s", k,
                  a->p->net->layers[id].name, dump());
        checked++;
        edges += nx->kind == ELIM_EDGE;
        app_feed(a, KEY_RIGHT);
    }
    cr_assert_gt(checked, 34);
    cr_log_info("%d steps checked, %d edge eliminations", checked, edges);
    app_free(a);
    term_close();
}

/* ---------- bug 7: without colour, the split classes carry attributes */

Test(tui_edges, no_colour_classes_have_attributes_in_boxes_and_legend)
{
    term_open(24, 80, 1);
    ui_styles_init(0);
    app *a = open_app("vgg16", "p100-4x4", 16);
    type(a, "2");
    draw(a);
    int ly = find_row("split:");
    cr_assert(ly >= 0, "%s", dump());
    /* every class word of the legend has an attribute, and no two the same */
    const char *r = row(ly);
    attr_t seen[SPLIT__COUNT];
    int n = 0;
    for (int k = 0; k < SPLIT__COUNT; k++) {
        char pat[32];
        snprintf(pat, sizeof pat, " %s", split_colours[k].word);
        const char *p = strstr(strstr(r, "split:"), pat);
        if (!p) continue;
        int col = 0;
        for (const char *q = r; q < p + 1; q++) col += ((unsigned char)*q & 0xC0) != 0x80;
        attr_t at = attr_at(ly, col) & (A_BOLD | A_UNDERLINE | A_ITALIC | A_DIM | A_REVERSE);
        cr_assert(at != 0, "legend word \"%s\" is plain:\n%s", split_colours[k].word, r);
        for (int j = 0; j < n; j++) cr_assert(seen[j] != at, "two legend words alike: %s", r);
        seen[n++] = at;
    }
    cr_assert(n >= 2, "the legend names the classes present: %s", r);
    /* conv1_1's box (data parallel) is bold, like "n" in the legend */
    int y, x;
    cr_assert_eq(box_of("conv1_1", &y, &x), 0, "%s", dump());
    int li = net_find(a->p->net, "conv1_1");
    int k = config_class(&a->p->cm->configs[li][a->p->best[li]]);
    cr_assert(attr_at(y + 1, x + 1) & ui_attr(ST_CLASS0 + k), "conv1_1's box carries no attribute:\n%s", dump());
    app_free(a);
    term_close();
}

/* ---------- bug 9: the TUI draws each class in the exports' colour */

/* The xterm-256 colour nearest to "#RRGGBB" (the 6x6x6 cube or the grey ramp). */
static int nearest_xterm(const char *hex)
{
    unsigned rgb = (unsigned)strtoul(hex + 1, NULL, 16);
    int c[3] = {(int)(rgb >> 16) & 255, (int)(rgb >> 8) & 255, (int)rgb & 255};
    static const int lv[6] = {0, 95, 135, 175, 215, 255};
    int best = -1;
    long bd = 0;
    for (int i = 16; i < 256; i++) {
        int t[3];
        if (i < 232) {
            t[0] = lv[(i - 16) / 36];
            t[1] = lv[(i - 16) / 6 % 6];
            t[2] = lv[(i - 16) % 6];
        } else {
            t[0] = t[1] = t[2] = 8 + 10 * (i - 232);
        }
        long d = 0;
        for (int q = 0; q < 3; q++) d += (long)(t[q] - c[q]) * (t[q] - c[q]);
        if (best < 0 || d < bd) {
            best = i;
            bd = d;
        }
    }
    return best;
}

/* "#RRGGBB" as cairo's SVG writes a fill: "rgb(85.098039%,32.54902%,30.980392%)". */
static void svg_fill(const char *hex, char *out, size_t n)
{
    unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);
    int c[3] = {(int)(v >> 16) & 255, (int)(v >> 8) & 255, (int)v & 255};
    size_t at = (size_t)snprintf(out, n, "fill:rgb(");
    for (int q = 0; q < 3; q++) {
        char b[32];
        snprintf(b, sizeof b, "%f", c[q] / 255.0 * 100);
        char *e = b + strlen(b) - 1;
        while (*e == '0') *e-- = 0;
        if (*e == '.') *e = 0;
        at += (size_t)snprintf(out + at, n - at, "%s%%%s", b, q < 2 ? "," : ")");
    }
}

/* The Timeline screen and its export draw each task kind in one colour,
 * palette.h's (issue 36, bug 9: transfers were red on screen and green in
 * the export, forward green and blue): on screen the X cells have the
 * transfer's pair, whose colour is the palette's nearest xterm colour; the
 * exported step fills its transfers with the palette's colour. */
Test(tui_edges, timeline_screen_and_export_share_the_kind_colours)
{
    term_open(30, 100, 1);
    ui_styles_init(1);
    cr_assert(ui_has_color() && COLORS >= 256);
    for (int k = 0; k < SIM__KINDS; k++) {
        short fg, bg, pair = (short)PAIR_NUMBER(ui_attr(ST_KIND0 + k));
        cr_assert(pair > 0, "kind %d has no colour pair", k);
        pair_content(pair, &fg, &bg);
        cr_assert_eq(fg, sim_kind_colours[k].xterm256, "kind %d", k);
        cr_assert_eq(sim_kind_colours[k].xterm256, nearest_xterm(sim_kind_colours[k].fill), "kind %d: %s", k,
                     sim_kind_colours[k].fill);
    }
    app *a = open_app("alexnet", "p100-4x4", 8);
    app_feed(a, '6');
    draw(a);
    int xs = 0;
    short want = (short)PAIR_NUMBER(ui_attr(ST_KIND0 + SIM_TRANSFER));
    for (int y = 3; y < LINES - 3; y++) {
        const char *r = row(y);
        int w = (int)strlen(r);
        for (int x = 12; x < w && x < COLS; x++) {
            if (r[x] != 'X') continue;
            xs++;
            cr_assert_eq((short)PAIR_NUMBER(attr_at(y, x)), want, "an X cell at %d,%d in another colour:\n%s", y, x,
                         dump());
        }
    }
    cr_assert_gt(xs, 0, "no transfer on screen:\n%s", dump());
    char dir[] = "/tmp/lw-kinds-XXXXXX", path[64], fill[96];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.svg", dir);
    sim_result *s = plan_simulate(a->p, a->p->best, NULL);
    lw_error err = {0};
    cr_assert_eq(draw_sim_step(s, plan_model(a->p), "optimum", path, &err), 0, "%s", err.msg);
    size_t len;
    char *svg = lw_read_file(path, &len, &err);
    cr_assert_not_null(svg, "%s", err.msg);
    svg_fill(sim_kind_colours[SIM_TRANSFER].fill, fill, sizeof fill);
    int n = 0;
    for (const char *q = svg; (q = strstr(q, fill)); q++) n++;
    cr_assert_gt(n, 1, "the export's transfers are not filled %s", fill);
    free(svg);
    sim_free(s);
    unlink(path);
    rmdir(dir);
    app_free(a);
    term_close();
}

Test(tui_edges, tui_and_exports_share_the_class_colours)
{
    term_open(24, 80, 1);
    ui_styles_init(1);
    cr_assert(ui_has_color() && COLORS >= 256);
    for (int k = 0; k < SPLIT__COUNT; k++) {
        short fg, bg;
        short pair = (short)PAIR_NUMBER(ui_attr(ST_CLASS0 + k));
        cr_assert(pair > 0, "class %s has no colour pair", split_colours[k].word);
        pair_content(pair, &fg, &bg);
        int want = nearest_xterm(split_colours[k].line);
        /* the cube's nearest or a neighbour as close (ties) */
        cr_assert(fg == want || fg == split_colours[k].xterm256, "%s: TUI colour %d", split_colours[k].word, fg);
        cr_assert_eq(split_colours[k].xterm256, want, "%s: %s is nearest xterm %d, the palette says %d",
                     split_colours[k].word, split_colours[k].line, want, split_colours[k].xterm256);
    }
    /* the exported graph draws conv1_1 (n) and fc6 (c) in those colours */
    app *a = open_app("vgg16", "p100-4x4", 4);
    char dir[] = "/tmp/lw-colours-XXXXXX", path[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/g.dot", dir);
    type(a, "2");
    cr_assert_eq(app_export(a, path), 0, "%s", a->status);
    size_t len;
    lw_error err = {0};
    char *dot = lw_read_file(path, &len, &err);
    cr_assert_not_null(dot, "%s", err.msg);
    static const char *const layers[] = {"conv1_1", "fc6"};
    for (int i = 0; i < 2; i++) {
        int li = net_find(a->p->net, layers[i]);
        const split_colour *pc = &split_colours[config_class(&a->p->cm->configs[li][a->p->best[li]])];
        char pat[64];
        snprintf(pat, sizeof pat, "\t%s\t[", layers[i]);
        const char *node = strstr(dot, pat);
        cr_assert_not_null(node, "%s not in the diagram", layers[i]);
        const char *end = strstr(node, "];");
        char want[40];
        snprintf(want, sizeof want, "color=\"%s\"", pc->line);
        const char *c = strstr(node, want);
        cr_assert(c && (!end || c < end), "%s is not drawn in %s", layers[i], pc->line);
    }
    free(dot);
    unlink(path);
    rmdir(dir);
    app_free(a);
    term_close();
}

/* ---------- a legend on the table */

Test(tui_edges, table_has_a_legend_of_marks_and_colours)
{
    term_open(24, 80, 1);
    app *a = open_app("vgg16", "p100-4x4", 4);
    draw(a);
    int y = find_row("P pinned");
    cr_assert(y > totals_row() && y < LINES - 2, "%s", dump());
    cr_assert(strstr(row(y), "* changed") && strstr(row(y), "split: n"), "%s", row(y));
    app_free(a);
    term_close();
}

/* ---------- context help: the current screen's keys first */

Test(tui_edges, help_opens_with_the_current_screens_keys)
{
    term_open(24, 80, 1);
    app *a = open_app("lenet5", "p100-4x4", 4);
    static const struct {
        const char *key;
        screen_id s;
    } screens[] = {{"1", SCR_TABLE}, {"2", SCR_GRAPH}, {"3", SCR_STEPS}, {"5", SCR_CLUSTER}};
    for (size_t i = 0; i < sizeof screens / sizeof screens[0]; i++) {
        type(a, screens[i].key);
        type(a, "?");
        draw(a);
        const screen_ops *o = app_screens[screens[i].s];
        char head[96];
        snprintf(head, sizeof head, "This screen: %s", o->title);
        int hy = find_row(head), first = find_row2(o->keys[0].label, o->keys[0].help);
        int everywhere = find_row("Everywhere");
        cr_assert(hy == 2, "help on %s does not open with its keys:\n%s", o->title, dump());
        cr_assert(first == hy + 1, "%s's first key:\n%s", o->title, dump());
        cr_assert(everywhere < 0 || everywhere > first, "the global keys come after:\n%s", dump());
        app_feed(a, 'q');
        cr_assert_eq(a->screen, screens[i].s);
    }
    /* the mouse is documented */
    type(a, "?");
    app_feed(a, KEY_END);
    draw(a);
    int found = 0;
    for (int i = 0; i < 40 && !found; i++) {
        found = find_row("Mouse") >= 0;
        app_feed(a, KEY_UP);
        draw(a);
    }
    cr_assert(found, "help has no Mouse section");
    app_free(a);
    term_close();
}

/* ---------- issue 31, finding 6: nothing the TUI is given to read or write
 * holds it. A FIFO typed in the open picker blocked in open() with q and
 * Esc dead; /dev/stdin read the terminal (every key went into the "file");
 * an export to a FIFO no one reads blocked in open(). Inputs are read from
 * regular files only (said so, the plan kept); an export to a FIFO with no
 * reader, or to a terminal, is refused without waiting. (Before the fix
 * this test hangs: its timeout fails it.) */
Test(tui_edges, fifos_and_devices_neither_block_nor_load, .timeout = 30)
{
    term_open(24, 80, 1);
    char dir[PATH_MAX], fifo[PATH_MAX + 32];
    scratch_dir(dir, sizeof dir);
    snprintf(fifo, sizeof fifo, "%s/pipe.json", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    app *a = open_app("lenet5", "p100-4x4", 4);
    const char *paths[] = {fifo, "/dev/zero", dir};
    const char *says[] = {"is a FIFO or pipe", "is a character device", "is a directory"};
    for (int k = 0; k < 3; k++) {
        for (int kind = OPEN_NETWORK; kind <= OPEN_STRATEGY; kind++) {
            open_prompt(a, (open_kind)kind, "File: ");
            type(a, paths[k]);
            app_feed(a, '\r');
            cr_assert(a->status_error && strstr(a->status, says[k]) && strstr(a->status, "regular files only"),
                      "%s: %s", paths[k], a->status);
            cr_assert_str_eq(a->p->net->name, "lenet5");
            cr_assert_str_eq(a->p->cl->name, "p100-4x4");
            cr_assert_eq(plan_pin_count(a->p), 0);
        }
    }
    /* an export to the FIFO, which no process reads */
    double t0 = lw_now();
    export_prompt(a, fifo);
    cr_assert(a->status_error && strstr(a->status, "no process is reading") && strstr(a->status, fifo), "%s",
              a->status);
    cr_assert(lw_now() - t0 < 5);
    /* with a reader, it is written in place, as the CLI writes it */
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    cr_assert(rd >= 0);
    export_prompt(a, fifo);
    cr_assert(!a->status_error && strstr(a->status, "wrote strategy JSON"), "%s", a->status);
    char buf[256];
    cr_assert(read(rd, buf, sizeof buf) > 100);
    close(rd);
    /* still responsive: q quits */
    cr_assert_eq(app_feed(a, 'q'), ACT_QUIT);
    app_free(a);
    unlink(fifo);
    rmdir(dir);
    term_close();
}

/* Trust marks (issue 36, item 4): the cluster screen marks the constants of
 * the precision in use that were not fitted (derived, copied from another
 * GPU or assumed), from the cluster file's provenance. */
Test(tui_cluster, unfitted_constants_are_marked)
{
    term_open(40, 120, 1);
    app *a = open_app("lenet5", "dgx-a100", 2);
    app_open_screen(a, SCR_CLUSTER);
    draw(a);
    /* tf32: the GEMM efficiency is fitted, the per-kernel overhead copied */
    cr_assert(find_row("Not fitted at tf32") >= 0, "%s", dump());
    cr_assert(find_row("~per-kernel") >= 0 && find_row("(copied from another GPU)") >= 0, "%s", dump());
    cr_assert(find_row("~GEMM efficiency") < 0, "tf32's GEMM efficiency is fitted: %s", dump());
    app_feed(a, 'P'); /* fp16: fitted */
    app_feed(a, 'P'); /* bf16: derived from fp16's */
    cr_assert_eq(a->p->cl->precision, PREC_BF16);
    draw(a);
    cr_assert(find_row("Not fitted at bf16") >= 0 && find_row("~GEMM efficiency") >= 0 && find_row("(derived)") >= 0, "%s",
              dump());
    app_free(a);
}

/* ---------- issue 36 bug 1: the graph's info line drops fields, never cuts a number */

Test(tui_edges, graph_info_line_at_80_columns_keeps_numbers_whole)
{
    term_open(24, 80, 1);
    app *a = open_app("vgg16", "p100-4x4", 16);
    type(a, "2");
    char log[4096] = "";
    int total = 0;
    for (int i = 0; i < a->p->net->n_layers; i++) {
        char what[64];
        snprintf(what, sizeof what, "graph at %s", a->p->net->layers[a->sel].name);
        total += cuts_of_frame(a, what, log, sizeof log);
        app_feed(a, ']');
    }
    cr_assert_eq(total, 0, "%d cuts:\n%s", total, log);
    /* the selected layer's name and its time stay */
    type(a, "1");
    select_layer(a, "conv3_3");
    type(a, "2");
    draw(a);
    int y = find_row("selected");
    cr_assert(y >= 0, "%s", dump());
    const char *info = row(y);
    size_t len = strlen(info);
    cr_assert(strstr(info, "conv3_3") && strstr(info, " ms"), "%s", info);
    /* whole fields only: it ends on a closed field, never "t_s 1" */
    cr_assert(len >= 2 && (info[len - 1] == ')' || strcmp(info + len - 2, "ms") == 0 ||
                           strcmp(info + len - 6, "pinned") == 0),
              "%s", info);
    app_free(a);
    term_close();
}

/* ---------- issue 36 bug 10: memory in GiB everywhere on the table */

Test(tui_edges, table_states_memory_in_gib)
{
    term_open(24, 100, 1);
    app *a = open_app("vgg16", "p100-4x4", 16);
    draw(a);
    double peak = a->p->best_eval.peak_memory_bytes;
    char want[64];
    snprintf(want, sizeof want, "peak %.2f GiB/GPU", peak / 1073741824.0);
    cr_assert(find_row(want) >= 0, "want \"%s\":\n%s", want, dump());
    cr_assert(find_row("GB/GPU") < 0, "%s", dump());
    /* the sizes' mem/GPU column too (weights and activations stay decimal) */
    select_layer(a, "fc6");
    app_feed(a, 'v');
    draw(a);
    int ti = totals_row();
    cr_assert(ti >= 0, "%s", dump());
    snprintf(want, sizeof want, "─%.1fGi", peak / 1073741824.0);
    cr_assert(strstr(row(ti), want), "want \"%s\": %s", want, row(ti));
    app_free(a);
    term_close();
}

/* ---------- issue 36 bug 11: undo's label and numbers read the same way */

Test(tui_edges, undo_status_reads_in_the_direction_of_its_label)
{
    term_open(24, 100, 1);
    app *a = open_app("vgg16", "p100-4x4", 16);
    double before = a->p->best_eval.total_ms;
    type(a, "-");
    double after = a->p->best_eval.total_ms;
    cr_assert(a->p->gpus == 8 && after != before, "%s", a->status);
    char label[32], nums[96];
    snprintf(label, sizeof label, "16%s8 GPUs", G->arrow_right);
    snprintf(nums, sizeof nums, "%.1f %s %.1f ms/step", before, G->arrow_right, after);
    cr_assert(strstr(a->status, label) && strstr(a->status, nums), "%s", a->status);
    type(a, "z");
    cr_assert_eq(a->p->gpus, 16);
    /* the label names the what-if taken back (16->8), so its numbers go 16's -> 8's too */
    cr_assert(strstr(a->status, "undo 1/1: ") && strstr(a->status, label), "%s", a->status);
    cr_assert(strstr(a->status, nums), "undo reads back against its label: %s", a->status);
    char back[64];
    snprintf(back, sizeof back, "undone: back to %.0f img/s", a->p->best_eval.images_per_s);
    cr_assert(strstr(a->status, back), "%s", a->status);
    /* a redo reads forward as the what-if did */
    type(a, "Z");
    cr_assert(strstr(a->status, "redo 1/1: ") && strstr(a->status, nums), "%s", a->status);
    app_free(a);
    term_close();
}

/* ---------- issue 36 bug 11: the cluster screen says one thing about the GPUs */

Test(tui_edges, cluster_screen_names_given_and_used_gpus_one_way)
{
    term_open(24, 100, 1);
    app *a = open_app("lenet5", "p100-4x4", 16);
    int used = a->p->best_eval.gpus_used;
    cr_assert(used > 0 && used < 16, "LeNet-5 uses %d of 16", used);
    type(a, "5");
    draw(a);
    char want[64];
    snprintf(want, sizeof want, "GPUs: 16 given, %d used", used);
    cr_assert(find_row(want) >= 0, "%s", dump());
    /* the field that sets the count is the count given, not "in use" */
    int y = find_row("GPUs given");
    cr_assert(y >= 0, "%s", dump());
    cr_assert(strstr(row(y), " 16"), "%s", row(y));
    cr_assert(find_row("GPUs in use") < 0, "16 \"in use\" beside %d used:\n%s", used, dump());
    app_free(a);
    term_close();
}

/* Issue 36, bug 4: explain worked out on a thread in the TUI (a->workers),
 * as Inception-v3 at 64 GPUs takes seconds: the status says so with Esc
 * to cancel, keys are answered meanwhile, Esc cancels and goes back, a
 * what-if meanwhile stops it first and the layer is explained for the new
 * optimum, and the answer appears when it is in. */
Test(tui_edges, explain_runs_on_a_thread_that_esc_cancels, .timeout = 120)
{
    term_open(24, 80, 0);
    app *a = open_app("vgg16", "p100-4x4", 16);
    a->workers = 1;
    select_layer(a, "fc6");
    app_feed(a, 'i');
    cr_assert_eq(a->screen, SCR_EXPLAIN);
    cr_assert(strstr(a->status, "explaining fc6") && strstr(a->status, "(Esc cancels)"), "%s", a->status);
    cr_assert_not_null(explain_of(a)->job, "worked out on a thread");
    cr_assert(app_busy(a) && app_waiting(a), "the loop polls for it");
    app_feed(a, KEY_DOWN); /* answered at once, not queued behind it */
    cr_assert_eq(a->screen, SCR_EXPLAIN);
    app_feed(a, 27);
    cr_assert_eq(a->screen, SCR_TABLE, "Esc went back");
    cr_assert(strstr(a->status, "explain fc6: cancelled"), "%s", a->status);
    draw(a);
    cr_assert(find_row("explain fc6: cancelled") >= 0, "%s", dump());
    /* a what-if while it is worked out: stopped first, then asked again */
    app_feed(a, 'i');
    cr_assert_not_null(explain_of(a)->job);
    app_feed(a, '-');
    cr_assert_eq(plan_gpus(a->p), 8);
    cr_assert_eq(a->screen, SCR_EXPLAIN);
    finish_idle(a);
    draw(a);
    cr_assert_null(explain_of(a)->job);
    cr_assert(explain_of(a)->valid);
    cr_assert_eq(explain_of(a)->e.layer, net_find(a->p->net, "fc6"));
    cr_assert(find_row("explain fc6: ") >= 0, "%s", dump());
    cr_assert(find_row("Why ") >= 0 || find_row("runner-up") >= 0, "the explanation is shown:\n%s", dump());
    app_free(a);
    term_close();
}
