/*
 * palette: the colours of the config classes, in one home for the TUI and
 * the exported diagrams, so a layer split by channel is the same orange in
 * both. A config's class is the set of dimensions it splits: n only
 * (data parallel), c only (model parallel), h/w only (spatial), a mix, or
 * none (one GPU). Okabe-Ito hues (colour-blind safe) for lines and text,
 * light tints as diagram fills; for a terminal the nearest xterm-256 and
 * the nearest of the 8 ANSI colours (numbered as curses' COLOR_*). No
 * curses here; the table is static and owned by nobody.
 */
#ifndef LW_PALETTE_H
#define LW_PALETTE_H

#include "configs.h"

/* SPLIT_R and SPLIT_X are sequence layers' (configs.h): a contraction
 * split alone (partial sums: Megatron's row-parallel layers), and replicas
 * alone (every task the whole tensor). Replicas beside a split leave its
 * class as it is. */
typedef enum { SPLIT_N, SPLIT_C, SPLIT_HW, SPLIT_MIXED, SPLIT_ONE, SPLIT_R, SPLIT_X, SPLIT__COUNT } split_class;

typedef struct split_colour {
    const char *name;        /* the diagrams' key: "n only (data parallel)" */
    const char *word;        /* the TUI's legend: "n", "c", "h/w", "mixed", "1 GPU" */
    const char *fill, *line; /* "#RRGGBB": a diagram's fill and its line and text colour */
    int xterm256;            /* nearest xterm-256 colour to line */
    int ansi;                /* nearest of the 8 ANSI colours (0 black .. 7 white) */
} split_colour;

extern const split_colour split_colours[SPLIT__COUNT];

split_class split_class_of(const config *c);

/* The simulated step's task kinds, in sim.h's order (forward, input
 * gradient, weight gradient, transfer, sync, all-gather, reduce-scatter,
 * partial-sum reduce, optimizer step), one colour each for the Timeline
 * screen and its export, in the TUI's convention elsewhere (compute green,
 * transfer red, sync yellow): a diagram's fill, and for a terminal the
 * nearest xterm-256 and ANSI colour. */
#define PALETTE_SIM_KINDS 9
typedef struct kind_colour {
    const char *fill;
    int xterm256, ansi;
} kind_colour;
extern const kind_colour sim_kind_colours[PALETTE_SIM_KINDS];

#endif
