/* palette: the config classes' colours (see palette.h). */
#include "palette.h"

const split_colour split_colours[SPLIT__COUNT] = {
    [SPLIT_N] = {"n only (data parallel)", "n", "#D6E8F7", "#0072B2", 25, 4},      /* blue */
    [SPLIT_C] = {"c only (model parallel)", "c", "#FBE3BD", "#C97F00", 172, 3},    /* orange; ANSI yellow */
    [SPLIT_HW] = {"h / w (spatial)", "h/w", "#CDEFE3", "#009E73", 35, 2},          /* bluish green */
    [SPLIT_MIXED] = {"mixed (n, c, h, w)", "mixed", "#E7D9F1", "#7E3F9E", 97, 5},  /* purple; ANSI magenta */
    [SPLIT_ONE] = {"one GPU", "1 GPU", "#EBEBEB", "#7A7A7A", 243, 7},              /* grey */
    [SPLIT_R] = {"r only (partial sums)", "r", "#F9D9C7", "#D55E00", 166, 1},      /* vermillion; ANSI red */
    [SPLIT_X] = {"x only (replicated)", "x", "#DCEFFA", "#3A8FC4", 68, 6},         /* sky blue; ANSI cyan */
};

const kind_colour sim_kind_colours[PALETTE_SIM_KINDS] = {
    {"#55A84F", 71, 2},  /* forward: green, as compute everywhere */
    {"#4FB3B0", 73, 6},  /* input gradient: teal; ANSI cyan */
    {"#4C78A8", 67, 4},  /* weight gradient: blue */
    {"#D9534F", 167, 1}, /* transfer: red, as t_x everywhere */
    {"#E3B23C", 179, 3}, /* gradient sync: amber; ANSI yellow, as t_s everywhere */
    {"#A872B0", 133, 5}, /* all-gather: purple; ANSI magenta */
    {"#C9A0DC", 182, 5}, /* reduce-scatter: lilac; ANSI magenta */
    {"#E8893A", 173, 3}, /* partial-sum reduce: orange; ANSI yellow */
    {"#8C8C8C", 245, 7}, /* optimizer step: grey */
};

split_class split_class_of(const config *c)
{
    int n = c->deg[DIM_N] > 1, ch = c->deg[DIM_C] > 1, hw = c->deg[DIM_H] > 1 || c->deg[DIM_W] > 1;
    int r = c->deg[DIM_R] > 1;
    if (!n && !ch && !hw && !r) return c->deg[DIM_X] > 1 ? SPLIT_X : SPLIT_ONE;
    if (n + ch + hw + r > 1) return SPLIT_MIXED;
    return n ? SPLIT_N : ch ? SPLIT_C : hw ? SPLIT_HW : SPLIT_R;
}
