/*
 * Screen tests of the repeated blocks (issue 32 item 9): the graph screen
 * folds GPT-2 XL's 48 transformer blocks into one box that f unfolds and
 * folds again, and a find inside a fold unfolds its block; the table
 * groups the rows by runs of identical blocks. Drawn headless
 * (tui_screen.h) at 80x24 and 200x60.
 */
#include "app.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "keys.h"
#include "screens.h"
#include "draw.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui_screen.h"

/* Whether the graph has a box named name (drawn or panned out of view). */
static int has_box(const app *a, const char *name)
{
    const graph_view *g = &graph_of(a)->gv;
    for (int i = 0; i < g->n_ids; i++) {
        const char *n = g->names && g->names[i] ? g->names[i] : a->p->net->layers[g->ids[i]].name;
        if (strcmp(n, name) == 0) return 1;
    }
    return 0;
}

/* What a draw of the current screen takes, in ms (the mean of n). */
static double draw_ms(app *a, int n)
{
    double t0 = lw_now();
    for (int i = 0; i < n; i++) draw(a);
    return (lw_now() - t0) * 1000.0 / n;
}

Test(tui_blocks, graph_folds_gpt2_xl_into_one_box_of_48_blocks, .timeout = 300)
{
    term_open(24, 80, 1);
    app *a = open_app("gpt2_xl", "dgx-a100", 4);
    type(a, "2");
    draw(a);
    /* embed, the 48 blocks in one box, the final norm and the head */
    cr_assert(find_row("block 0-47 x48") >= 0, "%s", dump());
    cr_assert(find_row("embed") >= 0, "%s", dump());
    cr_assert_eq(graph_of(a)->fd.n_units, 5, "the input, embed, the blocks, ln_f, lm_head");
    cr_assert(find_row("block0.attn") < 0, "a folded block's layers are not drawn:\n%s", dump());
    /* ] moves box by box, to the head */
    int b0 = net_find(a->p->net, "block0.ln1");
    type(a, "]]");
    draw(a);
    cr_assert_eq(a->sel, b0, "the fold's first layer is selected");
    cr_assert(find_row2("selected block 0-47 x48 of 11 layers", " ms") >= 0, "%s", dump());
    type(a, "]]");
    cr_assert_str_eq(a->p->net->layers[a->sel].name, "lm_head");
    draw(a);
    cr_assert(find_row("lm_head") >= 0, "%s", dump());
    type(a, "[[");
    cr_assert_eq(a->sel, b0);

    /* f unfolds the first block of the fold, f again folds it (the
     * layout built again, timed with the draw) */
    double t0 = lw_now();
    type(a, "f");
    draw(a);
    double unfold_ms = (lw_now() - t0) * 1000.0;
    cr_assert(find_row("block0.ln1") >= 0, "the selected layer is in view:\n%s", dump());
    cr_assert(has_box(a, "block0.attn") && has_box(a, "block 1-47 x47") && !has_box(a, "block 0-47 x48"), "%s",
              dump());
    type(a, "]");
    cr_assert_str_eq(a->p->net->layers[a->sel].name, "block0.attn", "the cursor walks into the unfolded block");
    type(a, "f");
    draw(a);
    cr_assert(find_row("block 0-47 x48") >= 0, "%s", dump());
    cr_assert(find_row("block0.attn") < 0, "%s", dump());

    /* at 200x60 as well; and both sizes draw well under 100 ms */
    double ms80 = draw_ms(a, 10);
    term_resize(60, 200);
    draw(a);
    cr_assert(find_row("block 0-47 x48") >= 0, "%s", dump());
    cr_assert(find_row("lm_head") >= 0, "the whole folded graph fits 60 rows:\n%s", dump());
    cr_assert(find_row("532 layers in 5 boxes") >= 0, "%s", dump());
    double ms200 = draw_ms(a, 10);
    fprintf(stderr, "gpt2_xl graph: %.2f ms a frame at 80x24, %.2f ms at 200x60; f and its frame %.2f ms\n", ms80,
            ms200, unfold_ms);
    cr_assert_lt(unfold_ms, 500.0, "unfolding a block lays out 16 boxes, not 532");
    cr_assert_lt(ms200, 500.0, "the folded graph draws in well under 100 ms (500 allows for sanitizers)");
    app_free(a);
    term_close();
}

Test(tui_blocks, llama2_7b_folds_its_32_blocks)
{
    term_open(24, 80, 1);
    app *a = open_app("llama2_7b", "dgx-a100", 4);
    type(a, "2");
    draw(a);
    const fold *f = &graph_of(a)->fd;
    int boxes = 0, blocks = 0;
    for (int u = 0; u < f->n_units; u++) {
        boxes += f->units[u].blocks > 0;
        blocks += f->units[u].blocks;
    }
    cr_assert_eq(blocks, 32, "every block folded");
    cr_assert(boxes >= 1 && f->n_units <= 4 + boxes, "%d units, %d folded boxes", f->n_units, boxes);
    cr_assert(find_row("block 0-") >= 0, "%s", dump());
    app_free(a);
    term_close();
}

Test(tui_blocks, find_inside_a_fold_unfolds_its_block, .timeout = 300)
{
    term_open(60, 200, 1);
    app *a = open_app("gpt2_xl", "dgx-a100", 4);
    type(a, "2/block7.fc1");
    app_feed(a, '\r');
    draw(a);
    cr_assert_str_eq(a->p->net->layers[a->sel].name, "block7.fc1");
    cr_assert(has_box(a, "block 0-6 x7") && has_box(a, "block 8-47 x40"), "%s", dump());
    cr_assert(find_row("block 8-47 x40") >= 0, "%s", dump());
    int y = find_row("block7.fc1");
    cr_assert(y >= 0, "the found layer is drawn:\n%s", dump());
    cr_assert(find_row2("selected block7.fc1", " ms") >= 0, "%s", dump());
    /* the next find folds the block the last one unfolded */
    type(a, "/block9.fc2");
    app_feed(a, '\r');
    draw(a);
    cr_assert_str_eq(a->p->net->layers[a->sel].name, "block9.fc2");
    cr_assert(has_box(a, "block 0-8 x9") && !has_box(a, "block7.fc1"), "block 7 folded again:\n%s", dump());
    cr_assert(find_row("block9.fc2") >= 0, "%s", dump());
    app_free(a);
    term_close();
}

Test(tui_blocks, cnn_graph_has_a_box_per_layer)
{
    term_open(24, 120, 1);
    app *a = open_app("resnet50", "p100-4x4", 4);
    type(a, "2");
    draw(a);
    cr_assert_eq(graph_of(a)->fd.n_units, a->p->net->n_layers);
    cr_assert(find_row("layers in") < 0 && find_row(" edges, ") >= 0, "%s", dump());
    type(a, "f");
    draw(a);
    cr_assert(find_row("in no repeated block") >= 0, "%s", dump());
    app_free(a);
    term_close();
}

Test(tui_blocks, table_groups_gpt2_xl_by_runs_of_identical_blocks, .timeout = 300)
{
    term_open(24, 80, 1);
    app *a = open_app("gpt2_xl", "dgx-a100", 4);
    double total = a->p->best_eval.total_ms;
    draw(a);
    /* every block has the optimum's one config: one group of 48 */
    int y = find_row("block 0-47 x48: 11 layers, t ");
    cr_assert(y >= 0, "%s", dump());
    cr_assert(strstr(row(y), " ms each"), "%s", row(y));
    cr_assert(find_row("block0.ln1") == y + 1, "the block's layers beneath its header:\n%s", dump());
    cr_assert(find_row("block1.ln1") < 0, "%s", dump());
    /* the totals are the optimum's */
    char tot[32];
    snprintf(tot, sizeof tot, "%.2f", total);
    cr_assert(strstr(row(totals_row()), tot), "%s\n%s", tot, dump());
    /* down from the embedding: the header selects the block's first layer */
    app_feed(a, KEY_HOME);
    app_feed(a, KEY_DOWN);
    app_feed(a, KEY_DOWN);
    draw(a);
    cr_assert_str_eq(a->p->net->layers[a->sel].name, "block0.ln1");
    cr_assert(attr_at(y, 3) & A_REVERSE, "the header row is selected:\n%s", dump());
    /* End reaches the head: 1 input + embed + 1 header + 11 + ln_f + lm_head rows */
    app_feed(a, KEY_END);
    cr_assert_str_eq(a->p->net->layers[a->sel].name, "lm_head");
    cr_assert_eq(table_of(a)->n_rows, 16);
    /* f hides the group's layer rows, and shows them again */
    type(a, "f");
    draw(a);
    cr_assert(find_row("block0.ln1") < 0, "%s", dump());
    cr_assert(find_row("+ block 0-47 x48") >= 0, "%s", dump());
    cr_assert_eq(table_of(a)->n_rows, 5);
    type(a, "f");
    draw(a);
    cr_assert(find_row("block0.ln1") >= 0, "%s", dump());
    /* a find reaches a layer of block 30: its row shows it, in its part's place */
    type(a, "/block30.fc1");
    app_feed(a, '\r');
    draw(a);
    cr_assert_str_eq(a->p->net->layers[a->sel].name, "block30.fc1");
    y = find_row("block30.fc1");
    cr_assert(y >= 0 && (attr_at(y, 3) & A_REVERSE), "%s", dump());
    cr_assert(find_row("block0.fc1") < 0, "block 30's fc1 in block 0's place:\n%s", dump());
    /* sorted by time: the flat table, every layer a row */
    type(a, "o");
    draw(a);
    cr_assert(find_row(" x48: ") < 0, "%s", dump());
    cr_assert_eq(table_of(a)->n_rows, a->p->net->n_layers);
    double ms80 = draw_ms(a, 10);
    type(a, "oooo"); /* back to layer order */
    cr_assert_eq(a->sort, SORT_LAYER);
    term_resize(60, 200);
    draw(a);
    cr_assert(find_row("lm_head") >= 0, "the grouped table fits 60 rows:\n%s", dump());
    double ms200 = draw_ms(a, 10);
    fprintf(stderr, "gpt2_xl table: %.2f ms a frame at 80x24 (sorted), %.2f ms at 200x60 (grouped)\n", ms80, ms200);
    cr_assert_lt(ms200, 500.0, "the table draws in well under 100 ms (500 allows for sanitizers)");
    app_free(a);
    term_close();
}

Test(tui_blocks, cnn_table_is_one_row_per_layer)
{
    term_open(24, 80, 1);
    app *a = open_app("vgg16", "p100-4x4", 4);
    draw(a);
    cr_assert_eq(table_of(a)->n_rows, a->p->net->n_layers);
    cr_assert_null(table_of(a)->rows);
    type(a, "f");
    draw(a);
    cr_assert(find_row("no repeated blocks") >= 0, "%s", dump());
    app_free(a);
    term_close();
}

/* issue 35 item 5: a pipelined plan's table has a header row per stage
 * (GPUs, t_i, memory) with the block groups inside; the graph is coloured
 * by stage, with a legend line (set_pipeline: tui_screen.h). */
Test(tui_blocks, pipelined_table_and_graph_by_stage, .timeout = 300)
{
    term_open(60, 200, 1);
    app *a = open_app("gpt2", "dgx-a100", 8);
    set_pipeline(a, "2 4");
    cr_assert_eq(plan_stage_count(a->p), 2, "%s", a->status);
    plan_stage_summary s0, s1;
    cr_assert_eq(plan_stage_info(a->p, 0, &s0), 0);
    cr_assert_eq(plan_stage_info(a->p, 1, &s1), 0);
    type(a, "1");
    draw(a);
    char want[96];
    snprintf(want, sizeof want, "stage 1: GPUs %d-%d, t_i %.2f ms", s0.gpu0, s0.gpu0 + s0.gpus - 1, s0.t_ms);
    int y0 = find_row(want);
    cr_assert(y0 >= 0, "%s\n%s", want, dump());
    snprintf(want, sizeof want, "stage 2: GPUs %d-%d, t_i %.2f ms", s1.gpu0, s1.gpu0 + s1.gpus - 1, s1.t_ms);
    int y1 = find_row(want);
    cr_assert(y1 > y0, "%s\n%s", want, dump());
    cr_assert(strstr(row(y0), "memory ") && strstr(row(y0), " GiB"), "%s", row(y0));
    /* no block group straddles the cut: stage 2 starts with its own group,
     * or, where the cut falls inside block b (where it falls moves with the
     * GPU's constants), with that block's layers from the cut, one a row,
     * and block b + 1's group after them */
    char first[64];
    snprintf(first, sizeof first, "%s", a->p->net->layers[s1.first].name);
    int b;
    cr_assert_eq(sscanf(first, "block%d.", &b), 1, "stage 2 starts in a block: %s", first);
    const int inside = strstr(first, ".ln1") == NULL;
    snprintf(want, sizeof want, "block %d-", b);
    if (inside) {
        cr_assert(find_row(want) < 0, "%s straddles the cut:\n%s", want, dump());
        cr_assert(strstr(row(y1 + 1), first), "%s under the stage 2 header:\n%s", first, dump());
        snprintf(want, sizeof want, "block %d-", b + 1);
        cr_assert(find_row(want) > y1 + 1, "%s in stage 2:\n%s", want, dump());
    } else {
        int g = find_row(want);
        cr_assert(g == y1 + 1, "%s under the stage 2 header:\n%s", want, dump());
    }
    /* the graph: coloured by stage, a legend of the stages */
    type(a, "2");
    draw(a);
    snprintf(want, sizeof want, "stage 1 GPUs %d-%d", s0.gpu0, s0.gpu0 + s0.gpus - 1);
    int ly = find_row(want);
    cr_assert(ly >= 0 && strstr(row(ly), "stage 2 GPUs"), "%s", dump());
    cr_assert(find_row("block 0-") >= 0, "%s", dump());
    cr_assert(graph_of(a)->fd.unit_of[s1.first] != graph_of(a)->fd.unit_of[s1.first - 1], "a box per stage");
    app_free(a);
    term_close();
}

/* issue 35 item 5, the rows: a pipelined plan's layer rows show the
 * layer's config on its stage's group, its GPUs within the group and its
 * times per micro-batch (plan_stage_layer_figures), not the one-stage
 * optimum's; the footer totals per micro-batch and gives the pipelined
 * step. */
Test(tui_blocks, pipelined_rows_show_the_stage_configs, .timeout = 300)
{
    term_open(60, 200, 1);
    app *a = open_app("gpt2", "dgx-a100", 8);
    set_pipeline(a, "2 4");
    cr_assert_eq(plan_stage_count(a->p), 2, "%s", a->status);
    plan_stage_summary s1;
    cr_assert_eq(plan_stage_info(a->p, 1, &s1), 0);
    cr_assert_gt(s1.gpu0, 0);
    type(a, "1");
    draw(a);
    /* stage 2's layers shown under its first group: each row's config and GPUs are the stage's */
    int checked = 0, differs = 0;
    for (int li = s1.first; li < s1.last; li++) {
        const char *name = a->p->net->layers[li].name;
        int y = find_row2(name, " ");
        if (y < 0 || strstr(row(y), "stage ") || strstr(row(y), " layers, t ")) continue;
        plan_stage_layer f;
        cr_assert_eq(plan_stage_layer_figures(a->p, li, &f), 0);
        cr_assert_eq(f.stage, 1);
        char cfg[64], one[64], gpus[32], want[96];
        plan_format_config(a->p, li, &f.c, cfg, sizeof cfg);
        plan_format_config(a->p, li, plan_config(a->p, li, a->p->best[li]), one, sizeof one);
        differs += strcmp(cfg, one) != 0;
        cr_assert(f.gpu0 == s1.gpu0 && f.gpu0 + f.gpus <= s1.gpu0 + s1.gpus);
        if (f.gpus > 1) snprintf(gpus, sizeof gpus, "%d-%d", f.gpu0, f.gpu0 + f.gpus - 1);
        else snprintf(gpus, sizeof gpus, "%d", f.gpu0);
        snprintf(want, sizeof want, " %s ", cfg);
        cr_assert(strstr(row(y), want), "%s: config %s (one stage: %s)\n%s", name, cfg, one, row(y));
        snprintf(want, sizeof want, " %s ", gpus);
        cr_assert(strstr(row(y), want), "%s: GPUs %s\n%s", name, gpus, row(y));
        checked++;
    }
    cr_assert_gt(checked, 3, "%s", dump());
    cr_assert_gt(differs, 0, "some layer's stage config differs from its one-stage config");
    /* the footer: totals per micro-batch, the pipelined step */
    plan_pipeline_summary ps;
    cr_assert_eq(plan_pipeline_info(a->p, &ps), 1);
    cr_assert(find_row("total per micro-batch") >= 0, "%s", dump());
    char step[96];
    snprintf(step, sizeof step, "pipelined step %.2f ms (Eq. 1 per stage", ps.step_ms);
    cr_assert(find_row(step) >= 0, "%s\n%s", step, dump());
    cr_assert(find_row("per micro-batch in the layer's stage") >= 0, "%s", dump());
    /* the graph: the info line and the folded box's label speak of the stage */
    select_layer(a, "lm_head");
    type(a, "2");
    draw(a);
    plan_stage_layer f;
    int head = net_find(a->p->net, "lm_head");
    cr_assert_eq(plan_stage_layer_figures(a->p, head, &f), 0);
    char cfg[64], want[160];
    plan_format_config(a->p, head, &f.c, cfg, sizeof cfg);
    snprintf(want, sizeof want, "selected lm_head (stage 2, GPUs %d-%d): %s, %.2f ms per micro-batch", f.gpu0,
             f.gpu0 + f.gpus - 1, cfg, f.t_c_ms + f.t_x_ms + f.t_s_ms / ps.microbatches);
    cr_assert(find_row(want) >= 0, "%s\n%s", want, dump());
    /* stage 2's folded blocks (from its first whole block): labelled with their configs in the stage */
    int b0 = s1.first, uniform = 1;
    while (b0 < s1.last && !strstr(a->p->net->layers[b0].name, ".ln1")) b0++;
    cr_assert_lt(b0, s1.last, "stage 2 holds a whole block");
    plan_stage_layer f0;
    cr_assert_eq(plan_stage_layer_figures(a->p, b0, &f0), 0);
    for (int li = b0; li < s1.last && strncmp(a->p->net->layers[li].name, "block", 5) == 0; li++) {
        cr_assert_eq(plan_stage_layer_figures(a->p, li, &f), 0);
        uniform &= config_equal(&f.c, &f0.c);
    }
    plan_format_config(a->p, b0, &f0.c, cfg, sizeof cfg);
    type(a, "1");
    select_layer(a, a->p->net->layers[b0 + 1].name);
    type(a, "2");
    draw(a);
    snprintf(want, sizeof want, " of 11 layers: %s, ", uniform ? cfg : "mixed");
    cr_assert(find_row2(want, " ms per micro-batch") >= 0, "%s\n%s", want, dump());
    /* why-not and explain speak of the one-stage optimum, and say so */
    type(a, "1");
    select_layer(a, "lm_head");
    type(a, "w");
    cr_assert(strstr(a->status, "explains the one-stage optimum"), "%s", a->status);
    cr_assert(strstr(a->status, " in stage 2"), "%s", a->status);
    type(a, "1i");
    cr_assert(strstr(a->status, "explains the one-stage optimum") && strstr(a->status, "stage 2 of 2"), "%s",
              a->status);
    app_free(a);
    term_close();
}

/* A pipelined plan's table groups a stage's blocks by their configs in
 * the stage: a pin (which holds in the one-stage optimum only) does not
 * split stage 1's group. */
Test(tui_blocks, pipelined_groups_follow_the_stage_configs, .timeout = 300)
{
    term_open(60, 200, 1);
    app *a = open_app("gpt2", "dgx-a100", 8);
    set_pipeline(a, "2 4");
    cr_assert_eq(plan_stage_count(a->p), 2, "%s", a->status);
    plan_stage_summary s1;
    cr_assert_eq(plan_stage_info(a->p, 1, &s1), 0);
    int b;
    cr_assert_eq(sscanf(a->p->net->layers[s1.first].name, "block%d.", &b), 1);
    cr_assert_gt(b, 5, "block 5 in stage 1");
    int li = net_find(a->p->net, "block5.fc1");
    int k = a->p->best[li] == 0 ? 1 : 0;
    app_perform(a, app_pin(a, li, k));
    cr_assert_eq(a->p->best[li], k);
    cr_assert_eq(plan_stage_count(a->p), 2);
    type(a, "1");
    draw(a);
    char want[64];
    snprintf(want, sizeof want, "block 0-%d x%d: 11 layers", b - 1, b);
    cr_assert(find_row(want) >= 0, "%s\n%s", want, dump());
    app_free(a);
    term_close();
}

/* A pipelined plan's table sorted by a time column sorts by the rows'
 * figures: per micro-batch in each layer's stage. */
Test(tui_blocks, pipelined_sort_by_the_stage_times, .timeout = 300)
{
    term_open(40, 160, 1);
    app *a = open_app("vgg16", "dgx-a100", 8);
    set_pipeline(a, "2 4");
    cr_assert_eq(plan_stage_count(a->p), 2, "%s", a->status);
    plan_pipeline_summary ps;
    plan_pipeline_info(a->p, &ps);
    type(a, "1o");
    cr_assert_eq(a->sort, SORT_TOTAL);
    draw(a);
    int n = a->p->net->n_layers;
    double prev = HUGE_VAL;
    for (int i = 0; i < n; i++) {
        plan_stage_layer f;
        cr_assert_eq(plan_stage_layer_figures(a->p, a->order[i], &f), 0);
        double t = f.t_c_ms + f.t_x_ms + f.t_s_ms / ps.microbatches;
        cr_assert_leq(t, prev, "row %d (%s): %g after %g", i, a->p->net->layers[a->order[i]].name, t, prev);
        prev = t;
    }
    app_free(a);
    term_close();
}

/* Blocks whose configs differ: the table splits the run where they
 * change; the graph's one box says "differ*" and its legend says why. */
Test(tui_blocks, blocks_that_differ_split_the_table_and_mark_the_box, .timeout = 120)
{
    term_open(40, 160, 1);
    app *a = open_app("gpt2", "dgx-a100", 8);
    draw(a);
    cr_assert(find_row("block 0-11 x12: 11 layers") >= 0, "one group before the pin:\n%s", dump());
    int li = net_find(a->p->net, "block5.fc1");
    int k = a->p->best[li] == 0 ? 1 : 0;
    app_perform(a, app_pin(a, li, k));
    cr_assert_eq(a->p->best[li], k);
    draw(a);
    cr_assert(find_row("block 0-11 x12") < 0, "the run splits:\n%s", dump());
    const fold *f = &table_of(a)->fd;
    const fold_unit *u = &f->units[f->unit_of[li]];
    cr_assert(u->blocks >= 1 && u->block0 <= 5 && u->block0 + u->blocks - 1 >= 5 && u->blocks < 12, "%d x%d",
              u->block0, u->blocks);
    type(a, "2");
    draw(a);
    cr_assert(find_row("block 0-11 x12") >= 0, "the graph keeps one box:\n%s", dump());
    cr_assert(find_row("│ differ*") >= 0, "its label:\n%s", dump());
    cr_assert(find_row("differ* blocks' configs") >= 0, "the legend:\n%s", dump());
    app_free(a);
    term_close();
}
