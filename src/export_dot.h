/*
 * export_dot: Graphviz diagrams of a plan — the computation graph, the
 * graph reduced by the first K steps of Algorithm 1, and the strategy (GPUs
 * against layers) — built with libcgraph and rendered in-process with
 * libgvc to .dot/.gv, .svg, .png or .pdf (chosen by the file's extension,
 * any case). A .dot file is the graph with all its attributes but no
 * layout positions, ready for `dot` or an editor.
 *
 *   graph     a node per layer (name, type, output shape, config, t_c, t_s),
 *             coloured by the config's split dimensions; an edge per cost
 *             model edge (bytes moved, t_x); modules (mixed_5b/..., layer2.0.)
 *             as clusters. Title and colour key are the graph's label.
 *   reduced   the nodes and edges alive after K steps; edges made by an
 *             elimination are bold dashed and say what they stand for.
 *   strategy  one table node: a row per layer, a column per GPU grouped by
 *             cluster node, each cell the block that GPU computes; rows whose
 *             input crosses cluster nodes are marked.
 *
 * Graphviz renders into memory (gvRenderData; agwrite into a memory stream
 * for DOT) and the bytes are written with lw_write_output (util.h): on any
 * error nothing is left and an existing file is untouched. Sizes are
 * checked before anything is built: at most 5000 layers and 10 000 edges
 * laid out, 65 536 cells in the strategy table (code 2, limit named).
 * Graphviz's messages are caught (not printed: the TUI owns the screen).
 * Every graph is freed before return; one Graphviz context serves the
 * process and is freed at exit (see export_dot.c for why).
 */
#ifndef LW_EXPORT_DOT_H
#define LW_EXPORT_DOT_H

#include "plan.h"

typedef enum { VIEW_GRAPH, VIEW_REDUCED, VIEW_STRATEGY } export_view;

const char *export_view_name(export_view v);
int export_view_from_name(const char *s); /* -1 if unknown */

/* step: for VIEW_REDUCED, the number of elimination steps applied (-1: all).
 * config_index: the strategy to show (NULL: the plan's optimum).
 * VIEW_REDUCED draws a step's table: the plan's search is run again
 * keeping them where it did not (plan_step_tables), so p changes.
 * Returns 0, or -1 with err set (code 2 for a bad path or extension). */
int export_diagram(plan *p, export_view view, int step, const int *config_index, const char *path,
                   lw_error *err);

/* The extensions export_diagram accepts, for messages: ".dot, .gv, .svg, .png or .pdf". */
const char *export_formats_help(void);
/* Checks what export_diagram checks of a path before drawing anything: a
 * known extension (case-insensitive) and an existing directory. 0, or -1
 * with err set (code 2). For the TUI, to ask again before a slow render. */
int export_check_path(const char *path, lw_error *err);

#endif
