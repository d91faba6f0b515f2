/*
 * The TUI's pipelines (issue 35), headless: the | what-if (its prompt,
 * refusals, undo and redo), the status and context lines, and the
 * Timeline of a pipelined plan (a row per stage's group, the micro-batch
 * in each bar, the bubble idle).
 */
#include "tui_screen.h"

__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

#define GPT "tests/fixtures/nets/tiny_gpt.json"

static void set_pipeline(app *a, const char *text)
{
    app_feed(a, '|');
    cr_assert_eq(a->prompt.kind, PROMPT_PIPELINE);
    app_feed(a, 0x15); /* ^U */
    type(a, text);
    app_feed(a, '\r');
    cr_assert_eq(a->prompt.kind, PROMPT_NONE);
}

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
