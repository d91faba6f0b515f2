/* fold: repeated blocks folded into units for the graph and table screens. */
#include "fold.h"

#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fold_free(fold *f)
{
    free(f->units);
    free(f->unit_of);
    free(f->runs);
    memset(f, 0, sizeof *f);
}

/* Blocks b - 1 and b of run r have the same configs, part by part. */
static int same_as_previous(const plan *p, const net_block_run *r, int b, const int *configs)
{
    for (int k = 0; k < r->len; k++) {
        int li = r->first + b * r->len + k;
        if (!config_equal(plan_config(p, li, configs[li]), plan_config(p, li - r->len, configs[li - r->len])))
            return 0;
    }
    return 1;
}

static fold_unit *add_unit(fold *f, int first, int last)
{
    fold_unit *u = &f->units[f->n_units++];
    memset(u, 0, sizeof *u);
    u->first = first;
    u->last = last;
    u->run = -1;
    for (int i = first; i <= last; i++) f->unit_of[i] = f->n_units - 1;
    return u;
}

/* The units of run ri's blocks, appended to f. */
static void fold_run(fold *f, const plan *p, int ri, const unsigned char *open, const int *configs, int by_stage)
{
    const net_block_run *r = &f->runs[ri];
    fold_unit *cur = NULL;
    int cur_stage = 0;
    for (int b = 0; b < r->count; b++) {
        int first = r->first + b * r->len;
        int stage = by_stage ? plan_stage_of(p, first) : 0;
        int straddles = by_stage && plan_stage_of(p, first + r->len - 1) != stage;
        if ((open && open[first]) || straddles) {
            for (int k = 0; k < r->len; k++) add_unit(f, first + k, first + k);
            cur = NULL;
            continue;
        }
        if (cur && stage == cur_stage && (!configs || same_as_previous(p, r, b, configs))) {
            cur->blocks++;
            cur->last = first + r->len - 1;
            for (int k = 0; k < r->len; k++) f->unit_of[first + k] = f->n_units - 1;
            continue;
        }
        cur = add_unit(f, first, first + r->len - 1);
        cur->blocks = 1;
        cur->block0 = r->first_index + b;
        cur->len = r->len;
        cur->run = ri;
        cur_stage = stage;
    }
}

void fold_build(fold *f, const plan *p, const unsigned char *open, const int *configs, int by_stage)
{
    fold_free(f);
    int n = plan_net(p)->n_layers;
    f->n_layers = n;
    f->units = lw_malloc(sizeof(fold_unit) * (size_t)(n ? n : 1));
    f->unit_of = lw_malloc(sizeof(int) * (size_t)(n ? n : 1));
    f->n_runs = plan_blocks(p, NULL, 0);
    f->runs = lw_malloc(sizeof(net_block_run) * (size_t)(f->n_runs ? f->n_runs : 1));
    plan_blocks(p, f->runs, f->n_runs);
    by_stage = by_stage && plan_stage_count(p) > 1;
    int li = 0;
    for (int ri = 0; ri < f->n_runs; ri++) {
        for (; li < f->runs[ri].first && li < n; li++) add_unit(f, li, li);
        fold_run(f, p, ri, open, configs, by_stage);
        li = f->runs[ri].first + f->runs[ri].len * f->runs[ri].count;
    }
    for (; li < n; li++) add_unit(f, li, li);
}

void fold_name(const fold *f, const fold_unit *u, char *buf, size_t n)
{
    const char *stem = u->run >= 0 ? f->runs[u->run].stem : "block";
    if (u->blocks > 1) snprintf(buf, n, "%s %d-%d x%d", stem, u->block0, u->block0 + u->blocks - 1, u->blocks);
    else snprintf(buf, n, "%s %d x1", stem, u->block0);
}

int fold_blocks_agree(const plan *p, const fold_unit *u, const int *configs)
{
    if (u->blocks < 2) return 1;
    for (int li = u->first + u->len; li <= u->last; li++)
        if (!config_equal(plan_config(p, li, configs[li]), plan_config(p, li - u->len, configs[li - u->len])))
            return 0;
    return 1;
}

int fold_block_start(const fold *f, int li)
{
    for (int ri = 0; ri < f->n_runs; ri++) {
        const net_block_run *r = &f->runs[ri];
        if (li >= r->first && li < r->first + r->len * r->count) return r->first + (li - r->first) / r->len * r->len;
    }
    return -1;
}
