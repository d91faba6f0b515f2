/*
 * export_dot: Graphviz diagrams of a plan — the computation graph, the
 * graph reduced by the first K steps of Algorithm 1, and the strategy (GPUs
 * against layers) — built with libcgraph and rendered in-process with
 * libgvc to .dot, .svg, .png or .pdf (chosen by the file's extension).
 * Files are written to a temporary name and renamed.
 */
#ifndef LW_EXPORT_DOT_H
#define LW_EXPORT_DOT_H

#include "plan.h"

typedef enum { VIEW_GRAPH, VIEW_REDUCED, VIEW_STRATEGY } export_view;

const char *export_view_name(export_view v);
int export_view_from_name(const char *s); /* -1 if unknown */

/* step: for VIEW_REDUCED, the number of elimination steps applied (-1: all).
 * config_index: the strategy to show (NULL: the plan's optimum).
 * Returns 0, or -1 with err set (code 2 for a bad path or extension). */
int export_diagram(const plan *p, export_view view, int step, const int *config_index, const char *path,
                   lw_error *err);

#endif
