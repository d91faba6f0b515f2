/*
 * cli: the command-line front end (search, eval, compare, scale, costs,
 * export, list). `layerwise` with no command, or `layerwise tui`, calls the
 * tui entry point it is given, so src/ never depends on the curses code.
 */
#ifndef LW_CLI_H
#define LW_CLI_H

#include "settings.h"


typedef struct tui_args {
    const char *net, *cluster, *profile;
    plan_settings set;
    int sync;                /* -1: the cluster's */
    plan_memory_settings mset;
    /* what-ifs given on the command line; zero (unset): the cluster's */
    int precision_set, precision;
    int bucket_set;
    double bucket_mb;
    double intra_bw, inter_bw; /* GB/s; 0: the cluster's */
    int n_pins;
    const char *const *pins; /* "LAYER=CONFIG" each, as --pin takes them */
    plan_pipe_settings pipe; /* --pp, --microbatches, --schedule, --vp: the pipeline opened with */
} tui_args;

typedef int (*tui_entry_fn)(const tui_args *a);

int cli_main(int argc, char **argv, tui_entry_fn tui);

#endif
