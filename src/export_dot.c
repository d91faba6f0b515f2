#include "export_dot.h"
#include <string.h>
const char *export_view_name(export_view v) { return v == VIEW_GRAPH ? "graph" : v == VIEW_REDUCED ? "reduced" : "strategy"; }
int export_view_from_name(const char *s)
{
    if (!strcmp(s, "graph")) return VIEW_GRAPH;
    if (!strcmp(s, "reduced")) return VIEW_REDUCED;
    if (!strcmp(s, "strategy")) return VIEW_STRATEGY;
    return -1;
}
int export_diagram(const plan *p, export_view view, int step, const int *ci, const char *path, lw_error *err)
{
    (void)p; (void)view; (void)step; (void)ci; (void)path;
    return lw_fail(err, 1, "export is not built yet");
}
