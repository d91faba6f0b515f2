/*
 * The TUI's pipelines (issue 35), headless: the | what-if (its prompt,
 * refusals, undo and redo), the status and context lines, and the
 * Timeline of a pipelined plan (a row per stage's group, the micro-batch
 * in each bar, the bubble idle), and J writing the pipeline.
 */
#include "tui_screen.h"
#include "pipeline.h"
#include "screens.h"

#include <dirent.h>

__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

#define GPT "tests/fixtures/nets/tiny_gpt.json"
#define LABEL_W 12 /* screen_timeline.c's row labels */

Test(tui_pipe, the_pipeline_whatif_and_its_undo)
{
    term_open(24, 220, 1);
    app *a = open_app(GPT, "dgx-a100", 8);
    double one = a->p->best_eval.total_ms;
    cr_assert_eq(plan_stage_count(a->p), 1);
    draw(a);
    cr_assert(!strstr(row(1), "bubble"), "%s", row(1));
    set_pipeline(a, "2 4");
    cr_assert_eq(plan_stage_count(a->p), 2, "%s", a->status);
    plan_pipeline_summary s;
    cr_assert_eq(plan_pipeline_info(a->p, &s), 1);
    cr_assert_eq(s.microbatches, 4);
    cr_assert(strstr(a->status, "pipelined, 2 stages x 4 (1f1b)") && strstr(a->status, "bubble"), "%s", a->status);
    cr_assert(a->p->best_eval.total_ms == one, "the one-stage optimum stays");
    draw(a);
    cr_assert(strstr(row(1), "pipelined 2 stages x 4 (1f1b)") && strstr(row(1), "bubble"), "%s", row(1));
    /* the prompt opens with the pipeline as it is */
    app_feed(a, '|');
    cr_assert_str_eq(a->prompt.buf, "2 4 1f1b");
    app_feed(a, 27);
    /* refused: words it does not know, a count that does not divide the batch */
    set_pipeline(a, "2 lots");
    cr_assert(a->status_error && strstr(a->status, "lots"), "%s", a->status);
    set_pipeline(a, "2 3 gpipe");
    cr_assert(a->status_error && strstr(a->status, "kept the previous setting"), "%s", a->status);
    /* a stage count past the engine's bound: said once, in the prompt's words */
    set_pipeline(a, "100");
    cr_assert(a->status_error && strstr(a->status, "the stages must be from 1 to 64 (asked for 100)") &&
                  !strstr(a->status, "pipeline: "),
              "%s", a->status);
    plan_pipeline_info(a->p, &s);
    cr_assert_eq(s.microbatches, 4);
    cr_assert_eq(s.schedule, plan_schedule_from_name("1f1b") - 1);
    set_pipeline(a, "2 8 gpipe");
    plan_pipeline_info(a->p, &s);
    cr_assert_eq(s.microbatches, 8);
    cr_assert_str_eq(s.schedule_name, "gpipe");
    /* undo: back to 2 x 4 1f1b, then to one stage; redo: pipelined again */
    app_feed(a, 'z');
    plan_pipeline_info(a->p, &s);
    cr_assert_eq(s.microbatches, 4, "%s", a->status);
    app_feed(a, 'z');
    cr_assert_eq(plan_stage_count(a->p), 1, "%s", a->status);
    cr_assert(strstr(a->status, "one stage"), "%s", a->status);
    draw(a);
    cr_assert(!strstr(row(1), "bubble"), "%s", row(1));
    app_feed(a, 'Z');
    cr_assert_eq(plan_stage_count(a->p), 2, "%s", a->status);
    /* another what-if keeps the pipeline, computed for the new setting */
    app_feed(a, '>');
    plan_pipeline_info(a->p, &s);
    cr_assert_eq(s.stages, 2);
    cr_assert_eq(s.microbatch, a->p->batch / 4, "%s", a->status);
    cr_assert(strstr(a->status, "; pipelined"), "%s", a->status);
    set_pipeline(a, "off");
    cr_assert_eq(plan_stage_count(a->p), 1, "%s", a->status);
    app_free(a);
    term_close();
}

/* The Timeline of a pipelined plan: a row per stage's group, labelled;
 * bars named by kind and micro-batch; the bubble idle; e draws and traces
 * it. */
Test(tui_pipe, the_timeline_of_a_pipelined_step)
{
    term_open(30, 140, 1);
    tui_args args = {.net = GPT, .cluster = "dgx-a100", .set = {.gpus = 8}, .sync = -1,
                     .pipe = {.stages = 2, .microbatches = 4, .schedule = plan_schedule_from_name("gpipe")}};
    lw_error err = {0};
    app *a = app_open(&args, &err);
    cr_assert_not_null(a, "%s", err.msg);
    cr_assert_eq(plan_stage_count(a->p), 2);
    app_feed(a, '6');
    draw(a);
    plan_stage_summary s0, s1;
    plan_stage_info(a->p, 0, &s0);
    plan_stage_info(a->p, 1, &s1);
    char l0[32], l1[32];
    snprintf(l0, sizeof l0, s0.gpus > 1 ? "s1 gpu %d-%d" : "s1 gpu %d", s0.gpu0, s0.gpu0 + s0.gpus - 1);
    snprintf(l1, sizeof l1, s1.gpus > 1 ? "s2 gpu %d-%d" : "s2 gpu %d", s1.gpu0, s1.gpu0 + s1.gpus - 1);
    int y0 = find_row(l0), y1 = find_row(l1);
    cr_assert(y0 > 0 && y1 == y0 + 1, "rows %s, %s:\n%s", l0, l1, dump());
    cr_assert(find_row("pipelined step: simulated") >= 0 && find_row("bubble") >= 0, "%s", dump());
    /* GPipe: stage 1 starts with micro-batch 0's forward while stage 2
     * waits for it (the bubble, idle cells), then runs F0 */
    const char *r0 = row(y0) + LABEL_W + 1;
    cr_assert(!strncmp(r0, "F0", 2), "stage 1's row: %s", row(y0));
    char r1[4096];
    snprintf(r1, sizeof r1, "%s", row(y1) + LABEL_W + 1);
    cr_assert_eq(r1[0], '.', "stage 2 idles first: %s", r1);
    cr_assert(strstr(r1, "F0fff") && strstr(r1, "F3") && strstr(r1, "B3bbb"), "stage 2's row: %s", r1);
    /* the cursor names the bar under it */
    cr_assert(find_row("stage s1") >= 0 && find_row("micro-batch 0") >= 0, "%s", dump());
    app_feed(a, KEY_DOWN);
    draw(a);
    cr_assert(find_row("the bubble") >= 0, "the cursor on stage 2's idle start:\n%s", dump());
    app_feed(a, ']');
    draw(a);
    cr_assert(find_row("forward of micro-batch 0") >= 0, "] to the next bar:\n%s", dump());
    /* e: the drawing and the trace of the pipelined step */
    char dir[] = "/tmp/lw-tui-pipe-XXXXXX", cwd[4096];
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(dir), 0);
    app_feed(a, 'e');
    app_feed(a, '\r');
    cr_assert(strstr(a->status, "pipelined step drawing"), "%s", a->status);
    size_t len;
    char *text = lw_read_file("layerwise-tiny_gpt-8gpu-timeline.svg", &len, NULL);
    cr_assert(text && strstr(text, "<svg"), "%s", a->status);
    free(text);
    app_feed(a, 'e');
    app_feed(a, 0x15);
    type(a, "p.trace.json");
    app_feed(a, '\r');
    text = lw_read_file("p.trace.json", &len, NULL);
    cr_assert(text && strstr(text, "\"traceEvents\"") && strstr(text, "forward mb3 stage 2"), "%s", a->status);
    free(text);
    unlink("layerwise-tiny_gpt-8gpu-timeline.svg");
    unlink("p.trace.json");
    cr_assert_eq(chdir(cwd), 0);
    rmdir(dir);
    /* pipelining off: the step simulator's timeline again */
    set_pipeline(a, "1");
    draw(a);
    cr_assert(find_row("simulated step") >= 0 && find_row("pipelined step") < 0, "%s", dump());
    app_free(a);
    term_close();
}

/* i on a pipelined plan: the status says why the layer sits in its stage
 * (what moving the stage's boundaries would make of the step). */
/* Interleaved: the plan's stages are its chunks, chunk j on group j mod p
 * (the table and graph group by chunk); the Timeline keeps a row per
 * group, and the cursor names the bar's chunk and micro-batch. */
Test(tui_pipe, the_interleaved_chunks_on_their_groups)
{
    term_open(30, 160, 1);
    tui_args args = {.net = GPT, .cluster = "dgx-a100", .set = {.gpus = 8}, .sync = -1,
                     .pipe = {.stages = 2, .microbatches = 4, .schedule = plan_schedule_from_name("interleaved"), .vp = 2}};
    lw_error err = {0};
    app *a = app_open(&args, &err);
    cr_assert_not_null(a, "%s", err.msg);
    cr_assert_eq(plan_stage_count(a->p), 4);
    plan_stage_summary s[4];
    for (int i = 0; i < 4; i++) cr_assert_eq(plan_stage_info(a->p, i, &s[i]), 0);
    cr_assert(s[2].gpu0 == s[0].gpu0 && s[3].gpu0 == s[1].gpu0 && s[0].gpu0 != s[1].gpu0);
    cr_assert(s[1].first == s[0].last && s[2].first == s[1].last && s[3].first == s[2].last);
    cr_assert_eq(plan_stage_of(a->p, s[2].first), 2);
    app_feed(a, '6');
    draw(a);
    cr_assert(find_row("s1 gpu") > 0 && find_row("s2 gpu") > 0 && find_row("s3 gpu") < 0, "a row per group:\n%s", dump());
    cr_assert(find_row("forward of micro-batch 0, chunk 1") >= 0, "%s", dump());
    app_free(a);
    term_close();
}

Test(tui_pipe, explain_says_the_stage)
{
    term_open(30, 200, 1);
    tui_args args = {.net = GPT, .cluster = "dgx-a100", .set = {.gpus = 8}, .sync = -1,
                     .pipe = {.stages = 2, .microbatches = 4}};
    lw_error err = {0};
    app *a = app_open(&args, &err);
    cr_assert_not_null(a, "%s", err.msg);
    select_layer(a, "block0.ln1");
    app_feed(a, 'i');
    cr_assert(strstr(a->status, "block0.ln1: stage 1 of 2") && strstr(a->status, "boundary 1|2 earlier: T ") &&
                  strstr(a->status, "boundary 1|2 later: T "),
              "%s", a->status);
    cr_assert_not(a->status_error);
    app_feed(a, 27);
    finish_idle(a);
    app_free(a);
    term_close();
}

/* The pipeline a PIPE_FORMAT file gives back on the plan's network,
 * cluster, GPUs and batch (as `eval -s FILE` reads it). */
static pipe_plan *read_back(const app *a, const char *path)
{
    size_t len;
    lw_error err = {0};
    char *text = lw_read_file(path, &len, &err);
    cr_assert_not_null(text, "%s", err.msg);
    const plan *p = a->p;
    const plan_memory_settings *ms = plan_memory_settings_of(p);
    pipe_plan *pp = pipe_plan_from_json(plan_net(p), plan_cluster(p), plan_profile(p), plan_gpus(p), plan_batch(p), text,
                                        len, path, ms->optimizer, plan_memory_limit(ms, plan_cluster(p)), &err);
    free(text);
    cr_assert_not_null(pp, "%s: %s", path, err.msg);
    return pp;
}

/* J (and e with a .json name) on a pipelined plan writes the pipeline as a
 * layerwise-strategy/2 document that reads back to the same step, Eq. 1
 * and simulated; not pipelined, the one-stage strategy as before. */
Test(tui_pipe, J_writes_the_pipeline)
{
    term_open(30, 160, 1);
    tui_args args = {.net = GPT, .cluster = "dgx-a100", .set = {.gpus = 8}, .sync = -1,
                     .pipe = {.stages = 2, .microbatches = 4, .schedule = plan_schedule_from_name("gpipe")}};
    lw_error err = {0};
    app *a = app_open(&args, &err);
    cr_assert_not_null(a, "%s", err.msg);
    plan_pipeline_summary s;
    cr_assert_eq(plan_pipeline_info(a->p, &s), 1);
    char dir[] = "/tmp/lw-tui-pipe-XXXXXX", cwd[4096];
    temp_dir(dir, cwd, sizeof cwd);
    cr_assert_eq(chdir(dir), 0);
    const char *def = "layerwise-tiny_gpt-8gpu-strategy.json";
    app_feed(a, 'J');
    cr_assert_str_eq(a->prompt.buf, def);
    app_feed(a, '\r');
    cr_assert(!a->status_error && strstr(a->status, "wrote pipelined strategy JSON (layerwise-strategy/2)"), "%s",
              a->status);
    size_t len;
    char *text = lw_read_file(def, &len, NULL);
    cr_assert(text && strstr(text, "\"layerwise-strategy/2\"") && strstr(text, "\"stages\"") &&
                  strstr(text, "\"pipeline-dp\"") && strstr(text, "\"gpipe\""),
              "%s", text ? text : a->status);
    free(text);
    pipe_plan *pp = read_back(a, def);
    cr_assert_eq(pp->p, 2);
    cr_assert_eq(pp->m, 4);
    cr_assert_float_eq(pp->step_ms, s.step_ms, 1e-9 * s.step_ms, "eval -s: %.6f, the plan: %.6f", pp->step_ms, s.step_ms);
    pipe_sim *r0 = plan_pipe_simulate(a->p), *r1 = pipe_plan_simulate(pp);
    cr_assert_float_eq(r1->step_ms, r0->step_ms, 1e-9 * r0->step_ms, "simulate -s: %.6f, the plan: %.6f", r1->step_ms,
                       r0->step_ms);
    pipe_sim_free(r0);
    pipe_sim_free(r1);
    pipe_plan_free(pp);
    /* opened in the TUI it is refused, saying what it is (no pins set) */
    cr_assert_eq(app_open_file(a, OPEN_STRATEGY, def), ACT_REDRAW);
    cr_assert(a->status_error && strstr(a->status, "a pipelined strategy (layerwise-strategy/2") &&
                  strstr(a->status, "eval -s"),
              "%s", a->status);
    cr_assert_eq(plan_pin_count(a->p), 0);
    unlink(def);
    /* e with a .json name on the table writes the same; no temporary stays */
    app_feed(a, 'e');
    app_feed(a, 0x15);
    type(a, "p.json");
    app_feed(a, '\r');
    cr_assert(strstr(a->status, "wrote pipelined strategy JSON"), "%s", a->status);
    pp = read_back(a, "p.json");
    cr_assert_float_eq(pp->step_ms, s.step_ms, 1e-9 * s.step_ms);
    pipe_plan_free(pp);
    unlink("p.json");
    /* Megatron-LM's stages are labelled so */
    set_pipeline(a, "2 4 megatron");
    cr_assert_eq(plan_stage_count(a->p), 2, "%s", a->status);
    app_feed(a, 'J');
    app_feed(a, '\r');
    text = lw_read_file(def, &len, NULL);
    cr_assert(text && strstr(text, "\"layerwise-strategy/2\"") && strstr(text, "\"megatron\""), "%s", a->status);
    free(text);
    plan_pipeline_info(a->p, &s);
    pp = read_back(a, def);
    cr_assert_float_eq(pp->step_ms, s.step_ms, 1e-9 * s.step_ms);
    pipe_plan_free(pp);
    unlink(def);
    /* one stage: the layerwise-strategy/1 document */
    set_pipeline(a, "off");
    app_feed(a, 'J');
    app_feed(a, '\r');
    cr_assert(strstr(a->status, "wrote strategy JSON"), "%s", a->status);
    text = lw_read_file(def, &len, NULL);
    cr_assert(text && strstr(text, "\"layerwise-strategy/1\"") && !strstr(text, "\"stages\""), "%s", a->status);
    free(text);
    unlink(def);
    DIR *d = opendir(".");
    struct dirent *de;
    int left = 0;
    while ((de = readdir(d)) != NULL) left += de->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(left, 0, "a temporary was left");
    cr_assert_eq(chdir(cwd), 0);
    cr_assert_eq(rmdir(dir), 0);
    app_free(a);
    term_close();
}
