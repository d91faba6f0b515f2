/*
 * draw_cairo: drawings made with cairo and written as SVG, PNG or PDF (the
 * file's extension, any case, chooses): the simulated training step as a
 * Gantt chart, and grouped bar charts (the scaling chart). The TUI's
 * Timeline and Scaling screens export through it; it knows no curses.
 *
 * Every drawing is rendered into memory (cairo's stream surfaces) and then
 * written with lw_write_output (util.h): a bad path is refused before
 * anything is drawn (code 2, the path and the formats named), and on any
 * failure nothing is left and an existing file is untouched. Nothing
 * returned here needs freeing.
 */
#ifndef LW_DRAW_CAIRO_H
#define LW_DRAW_CAIRO_H

#include "sim.h"

/* ".svg, .png or .pdf", for messages. */
const char *draw_formats_help(void);
/* 1 if path ends in one of those (any case), else 0. */
int draw_format_known(const char *path);
/* A known extension (case-insensitive) and a writable place (lw_check_output).
 * 0, or -1 with err set (code 2). */
int draw_check_path(const char *path, lw_error *err);

/* The simulated step s of the strategy named by strategy ("optimum",
 * "refined (simulated)", a file name) on m: a row per GPU, then a row per
 * link and NIC that carried traffic, time across with a millisecond axis;
 * each task a box coloured by kind (layer named where the box is wide
 * enough); the title sets the simulated step beside Eq. 1's total, each
 * labelled. 0, or -1 with err set. */
int draw_sim_step(const sim_result *s, const cost_model *m, const char *strategy, const char *path, lw_error *err);
/* The drawing's size in points (pixels in a PNG, rounded up). */
void draw_sim_step_size(const sim_result *s, double *w, double *h);

/* A pipelined step (pipeline.h's pipe_sim): a row per stage's group of
 * GPUs, labelled rows[i] ("stage 1, GPUs 0-3"), each forward, backward and
 * sync a box coloured as the step's (forward, input gradient, sync) with
 * its micro-batch written in it where it fits; white space is the
 * bubble. title and subtitle head it. 0, or -1 with err set. */
struct pipe_sim;
int draw_pipe_step(const struct pipe_sim *r, const char *const *rows, const char *title, const char *subtitle,
                   const char *path, lw_error *err);

/* One panel of grouped bars: a group per x position (a GPU count), a bar
 * per series in each. */
typedef struct draw_bars {
    const char *title;                 /* the panel's title, its model named */
    int bytes;                         /* values are bytes: axis labels "1.5 GB" */
    int log_scale;                     /* a log-10 value axis (values <= 0 not drawn) */
    int n_groups;
    const char *const *group_names;    /* [n_groups] "16 GPUs" */
    int n_series;                      /* at most 8 */
    const char *const *series_names;   /* [n_series] */
    const double *values;              /* [group * n_series + series]; NaN: missing, not drawn */
} draw_bars;

/* Panels stacked under one title. 0, or -1 with err set. */
int draw_bar_charts(const char *title, const draw_bars *panels, int n_panels, const char *path, lw_error *err);
void draw_bar_charts_size(int n_panels, double *w, double *h);

/* The lecture chart, a slide: a row per layer in the network's order, the
 * bytes it would sync split by sample as a bar leftwards of its name, the
 * bytes it would move split by channel rightwards, both on one log-10
 * scale; each bar filled in the colour of the layer's chosen split (its
 * palette.h class), a key of the classes below. */
typedef struct draw_lecture_row {
    const char *layer, *config;  /* its name; its chosen config as text */
    int cls;                     /* split_class of the chosen config */
    double sync_bytes, move_bytes; /* <= 0 or NaN: no bar */
} draw_lecture_row;

/* 0, or -1 with err set. */
int draw_lecture(const char *title, const draw_lecture_row *rows, int n, const char *path, lw_error *err);
void draw_lecture_size(int n, double *w, double *h);

#endif
