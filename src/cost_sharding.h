/*
 * cost_sharding: sharded data parallelism as sync schemes (cluster.h):
 * what ZeRO stage 1, 2 and 3 (Rajbhandari et al., SC 2020) and HSDP
 * (PyTorch FSDP's HYBRID_SHARD, Zhao et al., VLDB 2023) divide among the
 * replicas of a layer's weight shard, what they communicate, and what that
 * costs, over the same rings as all-reduce (cost_collective.c).
 *
 * The replicas of a weight shard are the tasks that hold the same channel
 * block (n x h x w of them, as for all-reduce). Among them
 *   zero1  the optimizer state (fp32 master weights included) is divided;
 *          gradients are reduce-scattered, each replica steps its part, the
 *          updated weights are all-gathered: the bytes of an all-reduce.
 *   zero2  the gradients too: the same two collectives.
 *   zero3  (fsdp) the weights too: all-gathered before forward and again
 *          before backward, gradients reduce-scattered: 1.5x the bytes.
 *   hsdp   zero3 among the replicas on one node, and the gradient shard
 *          all-reduced across nodes (the replicas at the same place on each
 *          node form a ring of their own).
 * The scheme is one for the whole strategy (the cluster's sync): t_s of a
 * layer still depends on its config alone, so the search stays exact.
 */
#ifndef LW_COST_SHARDING_H
#define LW_COST_SHARDING_H

#include "cost.h"

/* 0: nothing sharded (ps, ring); 1 optimizer state (zero1); 2 and
 * gradients (zero2); 3 and weights (zero3, hsdp). */
int sync_shard_level(sync_scheme s);
static inline int sync_sharded(sync_scheme s)
{
    return sync_shard_level(s) > 0;
}

/* One step's collectives of a layer's config under a sharded scheme: each
 * kind once (times in ms, bytes every replica sends, summed over them and
 * over the shards); a step runs n_ag all-gathers, one reduce-scatter and
 * (hsdp across nodes) one all-reduce: t_s = n_ag x ag + rs + ar. */
typedef struct shard_comm {
    int level;           /* sync_shard_level */
    int group;           /* replicas a shard's state is divided over (Nd) */
    int n_ag;            /* 1 (zero1, zero2: the updated weights) or 2 (zero3, hsdp: before forward and backward) */
    double ag_ms, rs_ms, ar_ms;
    double ag_bytes, rs_bytes, ar_bytes;
} shard_comm;

/* Fills *out for layer li's config c under the model's sync scheme; 0 when
 * nothing is synchronised (no weights, one replica, or not a sharded
 * scheme: *out zeroed), else 1. */
int cost_shard_comm(const cost_model *m, int li, const config *c, shard_comm *out);

/* Nd of task `task` of config c: the replicas its shard's state is divided
 * over (1 under ps and ring, or with one replica). */
int cost_shard_group(const cost_model *m, const config *c, int task);

/* Divides a task's weights, gradients and optimizer state (p, as
 * cost_memory_task counts them replicated) over Nd = group as the scheme
 * shards them. shard: the parameters the task's shard holds. */
void cost_shard_memory(const cost_model *m, double shard, int group, memory_parts *p);

/* The weights, gradients and optimizer state of `params` parameters on a
 * GPU, divided over `group` replicas as the model's scheme divides them
 * (group 1: replicated, as ps and ring keep them). */
void cost_shard_state(const cost_model *m, double params, int group, memory_parts *out);

/* Bytes of one parameter's working copy: the element size in mixed
 * precision, else the fp32 weight itself (what zero3 all-gathers). */
double cost_shard_work_bytes(const cost_model *m);

/* zero3 and hsdp: the bytes of gathered weights a GPU holds at once, the
 * layer it computes and the one prefetched (FSDP's limit of two): the two
 * largest layers' working copies, a bound that holds for every strategy.
 * 0 under the other schemes. */
double cost_shard_gather_bytes(const cost_model *m);

/* What every GPU that hosts a task holds besides its layers' terms: the
 * workspace and cost_shard_gather_bytes. */
double cost_fixed_bytes(const cost_model *m);

#endif
