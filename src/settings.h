/*
 * settings: what both front ends take from the command line and apply the
 * same way — a memory size, the cluster what-ifs (sync scheme, link
 * bandwidths, precision and bucket size) and pins given as LAYER=CONFIG —
 * so that the TUI does not reach into the CLI for them.
 *
 * Nothing here allocates what it returns; a cluster or plan passed in is
 * changed in place (a plan only through plan_apply).
 */
#ifndef LW_SETTINGS_H
#define LW_SETTINGS_H

#include "plan.h"

/* What a front end opens when no network or cluster is named. */
#define DEFAULT_NETWORK "vgg16"
#define DEFAULT_CLUSTER "p100-4x4"

/* Parses a memory size: a number with a suffix B, KB, MB, GB (powers of
 * 1000), KiB, MiB or GiB (powers of 1024), or a plain number of GiB as in
 * the cluster file. Returns bytes > 0, or -1 if malformed. */
double settings_parse_size(const char *s);

/* A sync scheme what-if on a loaded cluster (sync < 0: the cluster's). */
void settings_apply_sync(cluster *c, int sync);
/* The link what-ifs --intra-bw and --inter-bw (GB/s; 0: none). */
void settings_apply_links(cluster *c, double intra_bw, double inter_bw);
/* --precision (-1: none) and --bucket-mb (< 0: none); fails (exit 2) when
 * the cluster's GPU has no figures for that precision. */
int settings_apply_precision(cluster *c, int prec, double bucket_mb, lw_error *err);
/* --stack NAME (a file, or a stack under data/stacks/ or built in; NULL:
 * none) in place of the cluster's stack; fails (exit 2) naming the file
 * and place when it cannot be read. */
int settings_apply_stack(cluster *c, const char *name, lw_error *err);
/* Checks that each "LAYER=CONFIG" names a layer of net (once) and a config
 * that parses (whether the config exists on the GPUs used needs the plan:
 * settings_apply_pins). 0, or -1 with err set (exit 2). */
int settings_check_pins(const network *net, const char *const *pins, int n, lw_error *err);
/* Pins each "LAYER=CONFIG" and re-optimises the plan around them (one
 * plan_apply). 0, or -1 with err set (exit 2) when a layer or config is
 * not one of the plan's. */
int settings_apply_pins(plan *p, const char *const *pins, int n, lw_error *err);

#endif
