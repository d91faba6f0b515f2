/*
 * The Scale screen of a pipelined session (issue 35), headless: the P
 * series (the pipeline of the session's | settings at each GPU count)
 * equals the pipeline a plan opened with the same settings at that count
 * finds (search --pp's), a count P does not divide shows "-" and the
 * reason, | on the Scale screen recomputes the rows and undo drops the
 * series, G and e take the pipeline in, the worker process sends the
 * same rows, and Esc stops it.
 */
#include "tui_screen.h"
#include "screens.h"

#include <errno.h>
#include <math.h>
#include <sys/wait.h>

__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

#define GPT "tests/fixtures/nets/tiny_gpt.json"

/* The step of the pipeline a plan opened at `gpus` GPUs with pipeline
 * settings q finds (what search --pp prints for the same settings). */
static double pipeline_step(int gpus, plan_pipe_settings q, plan_pipeline_summary *out)
{
    lw_error err = {0};
    plan *p = plan_open(plan_load_network(GPT, &err), plan_load_cluster("dgx-a100", &err), NULL,
                        &(plan_options){.set = {.gpus = gpus}, .pipe = q}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    plan_pipeline_summary s;
    cr_assert_eq(plan_pipeline_info(p, &s), 1);
    if (out) *out = s;
    plan_free(p);
    return s.step_ms;
}

static const scale_row *row_at(app *a, int gpus)
{
    for (int i = 0; i < scale_of(a)->n; i++)
        if (scale_of(a)->rows[i].gpus == gpus) return &scale_of(a)->rows[i];
    cr_assert_fail("no row at %d GPUs", gpus);
    return NULL;
}

Test(tui_pscale, the_pipeline_series_is_search_pp_at_each_count)
{
    term_open(40, 200, 1);
    app *a = open_app(GPT, "dgx-a100", 8);
    set_pipeline(a, "2 4");
    app_feed(a, '4');
    finish_idle(a);
    draw(a);
    cr_assert_eq(scale_of(a)->n, 4); /* 1, 2, 4, 8 */
    const plan_pipe_settings q = {.stages = 2, .microbatches = 4};
    for (int i = 0; i < scale_of(a)->n; i++) {
        const scale_row *r = &scale_of(a)->rows[i];
        cr_assert_eq(r->pipe.stages, 2, "%d GPUs", r->gpus);
        if (r->gpus == 1) {
            cr_assert(!r->pipe.found && strstr(r->pipe.why, "2 stages do not divide 1 GPU"), "%s", r->pipe.why);
            cr_assert(isnan(r->pipe.total_ms));
            continue;
        }
        plan_pipeline_summary s;
        double want = pipeline_step(r->gpus, q, &s);
        cr_assert(r->pipe.found, "%d GPUs: %s", r->gpus, r->pipe.why);
        cr_assert(fabs(r->pipe.total_ms - want) <= 1e-12 * want, "%d GPUs: %.17g against %.17g", r->gpus,
                  r->pipe.total_ms, want);
        cr_assert_eq(r->pipe.microbatches, 4);
        cr_assert_eq(r->pipe.microbatches, s.microbatches);
        cr_assert_eq(r->pipe.fits, s.fits);
        cr_assert(fabs(r->pipe.bubble_fraction - s.bubble_fraction) <= 1e-12);
        long batch = 32L * r->gpus; /* the default batch per GPU */
        cr_assert(fabs(r->pipe.images_per_s - batch * 1000.0 / want) <= 1e-9 * r->pipe.images_per_s);
        cr_assert(r->pipe.mfu > 0 && r->pipe.mfu < 1 && r->pipe.sim_ips > 0, "%d GPUs", r->gpus);
    }
    /* the session's own count: the plan's pipeline itself */
    plan_pipeline_summary own;
    cr_assert_eq(plan_pipeline_info(a->p, &own), 1);
    cr_assert_eq(row_at(a, 8)->pipe.total_ms, own.step_ms);
    /* on the screen: the P row of the numbers, "-" at 1 GPU, and why */
    int y = find_row2("P pipeline", "-★");
    cr_assert(y >= 0, "%s", dump());
    cr_assert(strstr(row(y), "-★"), "%s", dump());
    cr_assert(find_row("- at 1 GPU: 2 stages do not divide 1 GPU") >= 0, "%s", dump());
    cr_assert(find_row("Eq. 1 per stage") >= 0, "which model made it: %s", dump());
    /* the chart's legend */
    cr_assert(find_row2("L layer-wise", "P pipeline") >= 0, "%s", dump());
    app_free(a);
    term_close();
}

Test(tui_pscale, the_pipe_key_on_the_scale_screen_recomputes_and_undo_drops_it)
{
    term_open(40, 200, 1);
    app *a = open_app(GPT, "dgx-a100", 8);
    app_feed(a, '4');
    finish_idle(a);
    draw(a);
    cr_assert(find_row("P pipeline") < 0, "not pipelined: no P series: %s", dump());
    for (int i = 0; i < scale_of(a)->n; i++) cr_assert_eq(scale_of(a)->rows[i].pipe.stages, 0);
    set_pipeline(a, "4 8 gpipe");
    finish_idle(a);
    draw(a);
    cr_assert_eq(row_at(a, 4)->pipe.stages, 4, "%s", a->status);
    cr_assert(!row_at(a, 2)->pipe.found && strstr(row_at(a, 2)->pipe.why, "4 stages do not divide 2 GPUs"));
    const plan_scale_pipe *e = &row_at(a, 8)->pipe;
    cr_assert(e->found && e->microbatches == 8 && !strcmp(plan_schedule_name(e->schedule + 1), "gpipe"), "%s", e->why);
    double want = pipeline_step(8, (plan_pipe_settings){.stages = 4, .microbatches = 8,
                                                         .schedule = plan_schedule_from_name("gpipe")}, NULL);
    cr_assert(fabs(e->total_ms - want) <= 1e-12 * want);
    cr_assert(find_row("- at 1 GPU: 4 stages do not divide 1 GPU; - at 2 GPUs: 4 stages do not divide 2 GPUs") >= 0,
              "%s", dump());
    app_feed(a, 'z');
    finish_idle(a);
    draw(a);
    cr_assert_eq(plan_stage_count(a->p), 1, "%s", a->status);
    cr_assert_eq(row_at(a, 8)->pipe.stages, 0);
    cr_assert(find_row("P pipeline") < 0, "%s", dump());
    app_free(a);
    term_close();
}

Test(tui_pscale, a_sweep_has_the_pipeline_at_each_value)
{
    term_open(40, 200, 1);
    app *a = open_app(GPT, "dgx-a100", 8);
    set_pipeline(a, "2 4");
    app_feed(a, '4');
    app_feed(a, 'S'); /* the inter-node bandwidth */
    finish_idle(a);
    draw(a);
    cr_assert(strstr(a->status, "inter-node bandwidth"), "%s", a->status);
    plan_pipeline_summary own;
    cr_assert_eq(plan_pipeline_info(a->p, &own), 1);
    int now = 0;
    for (int i = 0; i < scale_of(a)->n; i++) {
        const scale_row *r = &scale_of(a)->rows[i];
        cr_assert(r->gpus == 8 && r->pipe.found, "%g GB/s: %s", r->x, r->pipe.why);
        if (r->x == plan_cluster(a->p)->inter.bandwidth_gbs) {
            now = 1; /* the plan's own setting, computed again: the same pipeline */
            cr_assert(fabs(r->pipe.total_ms - own.step_ms) <= 1e-12 * own.step_ms, "%.17g against %.17g",
                      r->pipe.total_ms, own.step_ms);
        }
    }
    cr_assert(now, "the current bandwidth is one of the values");
    cr_assert(find_row2("P pipeline", "x") >= 0, "the ratio: %s", dump());
    app_free(a);
    term_close();
}

Test(tui_pscale, gpus_for_x_images_names_the_pipeline)
{
    term_open(40, 200, 1);
    app *a = open_app(GPT, "dgx-a100", 8);
    set_pipeline(a, "2 4");
    app_feed(a, '4');
    finish_idle(a);
    double want = row_at(a, 4)->pipe.images_per_s;
    int i = plan_scale_gpus_for(scale_of(a)->rows, scale_of(a)->n, 4, want, 0);
    cr_assert(i >= 0 && scale_of(a)->rows[i].gpus == 4);
    app_feed(a, 'G');
    app_feed(a, 0x15);
    char b[64];
    snprintf(b, sizeof b, "%.0f", floor(want));
    type(a, b);
    app_feed(a, '\r');
    cr_assert(!a->status_error && strstr(a->status, "pipeline 4 GPUs"), "%s", a->status);
    /* more than any pipeline reaches: none */
    app_feed(a, 'G');
    app_feed(a, 0x15);
    type(a, "1e12");
    app_feed(a, '\r');
    cr_assert(strstr(a->status, "pipeline none"), "%s", a->status);
    app_free(a);
    term_close();
}

Test(tui_pscale, export_draws_the_pipeline)
{
    char dir[] = "/tmp/lw_pscale_XXXXXX", cwd[4096];
    temp_dir(dir, cwd, sizeof cwd);
    term_open(40, 200, 1);
    app *a = open_app(GPT, "dgx-a100", 8);
    set_pipeline(a, "2 4");
    cr_assert_eq(chdir(dir), 0);
    app_feed(a, '4');
    finish_idle(a);
    static const char *const names[] = {"layerwise-tiny_gpt-scaling.svg", "c.png", "c.pdf"};
    export_each_format(a, "scaling chart", names, "c.dot");
    app_free(a);
    term_close();
    cr_assert_eq(chdir(cwd), 0);
    cr_assert_eq(rmdir(dir), 0, "files left in %s", dir);
}

Test(tui_pscale, the_worker_sends_the_same_pipeline_and_esc_stops_it)
{
    term_open(40, 200, 1);
    app *a = open_app(GPT, "dgx-a100", 8);
    app *b = open_app(GPT, "dgx-a100", 8);
    set_pipeline(a, "2 4");
    set_pipeline(b, "2 4");
    cr_assert(plan_background_join(b->p), "b's worker carries on");
    a->workers = 1;
    app_feed(a, '4');
    cr_assert(scale_of(a)->pid > 0, "a worker was started");
    for (int i = 0; i < 600 && app_busy(a); i++) {
        app_idle(a, 0.05);
        usleep(20000);
    }
    cr_assert_not(app_busy(a), "the worker finished");
    app_feed(b, '4');
    finish_idle(b);
    cr_assert_eq(scale_of(a)->n, scale_of(b)->n);
    for (int i = 0; i < scale_of(a)->n; i++) {
        const plan_scale_pipe *x = &scale_of(a)->rows[i].pipe, *y = &scale_of(b)->rows[i].pipe;
        cr_assert_eq(x->found, y->found, "row %d", i);
        cr_assert_str_eq(x->why, y->why);
        if (x->found) cr_assert(x->total_ms == y->total_ms && x->sim_ips == y->sim_ips, "row %d", i);
    }
    /* Esc while the worker computes: stopped and reaped, the rows not in left empty, saying so */
    app_feed(a, 'r');
    int pid = scale_of(a)->pid;
    cr_assert(pid > 0 && scale_of(a)->done == 0);
    app_feed(a, 27);
    cr_assert_eq(scale_of(a)->pid, 0);
    errno = 0;
    cr_assert_eq(waitpid(pid, NULL, WNOHANG), -1, "and reaped");
    cr_assert_eq(errno, ECHILD);
    cr_assert_not(app_busy(a));
    cr_assert(strstr(a->status, "cancelled after 0 of 4 rows"), "%s", a->status);
    cr_assert(isnan(scale_of(a)->rows[3].ips[3]) && !scale_of(a)->rows[3].pipe.found &&
              strstr(scale_of(a)->rows[3].pipe.why, "cancelled"));
    /* r computes them again */
    app_feed(a, 'r');
    for (int i = 0; i < 600 && app_busy(a); i++) {
        app_idle(a, 0.05);
        usleep(20000);
    }
    cr_assert(scale_of(a)->rows[3].pipe.found);
    app_free(a);
    app_free(b);
    term_close();
}
