/*
 * Screen tests of the TUI's rough edges (issue 13's "Bugs found" and the
 * habits of htop, tig and less users): each test drives the app through the
 * keys the event loop hands it and reads the headless screen back
 * (tui_screen.h), and each fails on the behaviour it replaced.
 */
#include "app.h"
#include "cli.h"
#include "draw.h"

#include <criterion/criterion.h>
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
    cr_assert_eq(a->prompt, PROMPT_JSON);
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
    cr_assert_eq(a->prompt, PROMPT_OVERWRITE, "no question before writing over %s: %s", path, a->status);
    draw(a);
    cr_assert(find_row("overwrite it? (y/n)") == LINES - 2, "%s", dump());
    cr_assert(strstr(row(LINES - 1), "y overwrite"), "%s", row(LINES - 1));
    app_feed(a, 'x'); /* not an answer */
    cr_assert_eq(a->prompt, PROMPT_OVERWRITE);
    app_feed(a, 'n');
    cr_assert_eq(a->prompt, PROMPT_NONE);
    cr_assert_eq(file_size(path), 8, "n wrote the file");
    cr_assert(strstr(a->status, "not written"), "%s", a->status);
    /* q answers no too, and does not quit */
    export_prompt(a, path);
    cr_assert_eq(app_feed(a, 'q'), ACT_REDRAW);
    cr_assert_not(a->quit);
    cr_assert_eq(file_size(path), 8);
    export_prompt(a, path);
    app_feed(a, 'y');
    cr_assert_eq(a->prompt, PROMPT_NONE);
    cr_assert(file_size(path) > 100, "y did not write: %s", a->status);
    cr_assert(strstr(a->status, "wrote strategy JSON"), "%s", a->status);
    /* a new name is written without a question */
    char fresh[PATH_MAX + 32];
    snprintf(fresh, sizeof fresh, "%s/new.json", dir);
    export_prompt(a, fresh);
    cr_assert_eq(a->prompt, PROMPT_NONE);
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
    cr_assert_eq(a->prompt, PROMPT_NONE);
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
