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
    double intra_bw, inter_bw; /* GB/s; 0: the cluster's */
    int n_pins;
    const char *const *pins; /* "LAYER=CONFIG" each, as --pin takes them */
} tui_args;

/* Parses a memory size: a number with a suffix B, KB, MB, GB (powers of
 * 1000), KiB, MiB or GiB (powers of 1024), or a plain number of GiB as in
 * the cluster file. Returns bytes > 0, or -1 if malformed. */
double cli_parse_size(const char *s);

typedef int (*tui_entry_fn)(const tui_args *a);

int cli_main(int argc, char **argv, tui_entry_fn tui);

/* Applies a what-if sync override to a loaded cluster. */
void cli_apply_sync(cluster *c, int sync);
/* Applies the link what-ifs --intra-bw and --inter-bw (GB/s; 0: none). */
void cli_apply_links(cluster *c, double intra_bw, double inter_bw);
/* Checks that each "LAYER=CONFIG" names a layer of net and a config that
 * parses (whether the config exists on the GPUs used needs the plan:
 * cli_apply_pins). 0, or -1 with err set (exit 2). */
int cli_check_pins(const network *net, const char *const *pins, int n, lw_error *err);
/* Pins each "LAYER=CONFIG" and re-optimises the plan around them. 0, or -1
 * with err set (exit 2) when a layer or config is not one of the plan's. */
int cli_apply_pins(plan *p, const char *const *pins, int n, lw_error *err);
/* Applies --precision (-1: none) and --bucket-mb (< 0: none); fails (exit
 * 2) when the cluster's GPU has no figures for that precision. */
int cli_apply_precision(cluster *c, int prec, double bucket_mb, lw_error *err);

#endif
