/*
 * cluster: the device graph D of the paper — GPUs, their compute constants,
 * and the links between them — and reading "layerwise-cluster/1" files.
 *
 * Devices are numbered node-major (node 0's GPUs first); using k GPUs means
 * the first k. The cluster owns its link overrides; free with cluster_free().
 */
#ifndef LW_CLUSTER_H
#define LW_CLUSTER_H

#include "util.h"

#define CLUSTER_MAX_GPUS 4096
#define CLUSTER_MAX_LINKS 65536 /* entries of "links" (per-pair overrides) */

typedef enum { SYNC_PARAMETER_SERVER, SYNC_RING_ALLREDUCE } sync_scheme;

/* Efficiency classes of operators for the roofline. */
enum { OPC_CONV, OPC_LINEAR, OPC_POOL, OPC_ELEMENTWISE, OPC__COUNT };

typedef struct gpu_spec {
    char name[64];
    double peak_tflops;          /* fp32 peak */
    double memory_gib;
    double memory_bandwidth_gbs; /* HBM/GDDR, GB/s (1e9 bytes) */
    double efficiency[OPC__COUNT]; /* achieved fraction of peak (compute-bound side) */
    double memory_efficiency;    /* achieved fraction of memory bandwidth */
    double winograd_speedup;     /* arithmetic saving cuDNN gets on 3x3 stride-1 convs */
    double kernel_overhead_us;   /* launch + tail per kernel */
    double saturation_gflop;     /* work at which a kernel reaches half its efficiency */
    double step_overhead_ms;     /* per training step outside the kernels: runtime, input pipeline */
} gpu_spec;

typedef struct link_spec {
    double bandwidth_gbs;        /* GB/s, one direction */
    double latency_us;
} link_spec;

typedef struct link_override {
    int a, b;                    /* device ids, symmetric */
    link_spec link;
} link_override;

typedef struct cluster {
    char *name;
    char *path;
    int nodes, gpus_per_node;
    gpu_spec gpu;
    link_spec intra, inter;
    int nics_per_node;           /* NICs sharing the node's inter-node traffic */
    sync_scheme sync;
    int n_overrides;
    link_override *overrides;
} cluster;

int cluster_gpus(const cluster *c);
int cluster_node_of(const cluster *c, int dev);
/* The link between two distinct devices (overrides first, then intra/inter). */
link_spec cluster_link(const cluster *c, int a, int b);
/* Seconds to move `bytes` from a to b (0 when a == b). */
double cluster_transfer_s(const cluster *c, int a, int b, double bytes);

const char *sync_scheme_name(sync_scheme s);
int sync_scheme_from_name(const char *s); /* -1 if unknown */

cluster *cluster_from_json(const char *text, size_t len, const char *label, lw_error *err);
cluster *cluster_load_file(const char *path, lw_error *err);
cluster *cluster_clone(const cluster *c);
/* Same devices, constants and links (names and paths aside). */
int cluster_equal(const cluster *a, const cluster *b);
/* Sets the bandwidth between GPUs of a node everywhere it applies: the
 * intra-node link and the file's overrides between GPUs of one node (the
 * CLI's --intra-bw and the cluster screen's field). */
void cluster_set_intra_bw(cluster *c, double gbs);
void cluster_free(cluster *c);

#endif
