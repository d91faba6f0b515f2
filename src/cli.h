/*
 * cli: the command-line front end (search, eval, compare, scale, costs,
 * export, list). `layerwise` with no command, or `layerwise tui`, calls the
 * tui entry point it is given, so src/ never depends on the curses code.
 */
#ifndef LW_CLI_H
#define LW_CLI_H

#include "plan.h"

#define DEFAULT_NETWORK "vgg16"
#define DEFAULT_CLUSTER "p100-4x4"

typedef struct tui_args {
    const char *net, *cluster, *profile;
    plan_settings set;
    int sync;                /* -1: the cluster's */
    plan_memory_settings mset;
    /* what-ifs given on the command line; zero (unset): the cluster's */
    int precision_set, precision;
    int bucket_set;
    double bucket_mb;
} tui_args;

/* Parses a memory size: a number with a suffix B, KB, MB, GB (powers of
 * 1000), KiB, MiB or GiB (powers of 1024), or a plain number of GiB as in
 * the cluster file. Returns bytes > 0, or -1 if malformed. */
double cli_parse_size(const char *s);

typedef int (*tui_entry_fn)(const tui_args *a);

int cli_main(int argc, char **argv, tui_entry_fn tui);

/* Applies a what-if sync override to a loaded cluster. */
void cli_apply_sync(cluster *c, int sync);
/* Applies --precision (-1: none) and --bucket-mb (< 0: none); fails (exit
 * 2) when the cluster's GPU has no figures for that precision. */
int cli_apply_precision(cluster *c, int prec, double bucket_mb, lw_error *err);

#endif
