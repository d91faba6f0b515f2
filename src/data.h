/*
 * data: what a network, cluster or profile name means, and loading it.
 */
#ifndef LW_DATA_H
#define LW_DATA_H

#include "cluster.h"
#include "model.h"
#include "profile.h"

/* Resolves NAME as a path, or a bare name under the data directories
 * (LAYERWISE_DATA, ../data beside the executable, the installed share
 * directory), or an embedded copy. kind is "networks", "clusters",
 * "stacks" or "profiles". Returns the file's text (caller frees) and sets *label. */
char *data_resolve(const char *kind, const char *name, char **label, size_t *len, lw_error *err);
/* The file data_resolve would read for NAME (malloc'd), or NULL when it
 * would take an embedded copy or find nothing: for telling whether an
 * output names an input. */
char *data_locate(const char *kind, const char *name);
/* Names of the shipped files of a kind (embedded), NULL-terminated, static. */
const char *const *data_builtin_names(const char *kind);

network *plan_load_network(const char *name, lw_error *err);
cluster *plan_load_cluster(const char *name, lw_error *err);
profile *plan_load_profile(const char *name, lw_error *err);
/* A software stack (kind "stacks": data/stacks/NAME.json or a path) into *s. */
int plan_load_stack(const char *name, stack_spec *s, lw_error *err);

#endif
