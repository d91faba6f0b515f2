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

/* How replicas keep their weights in step: the paper's parameter server,
 * ring all-reduce, or sharded data parallelism (cost_sharding.c): ZeRO
 * stages 1-3 (Rajbhandari et al. 2020; zero3 is PyTorch FSDP's FULL_SHARD)
 * and HSDP (sharded inside a node, replicated across nodes; Zhao et al.
 * 2023). SYNC__COUNT: how many there are, in this (cycling) order. */
typedef enum {
    SYNC_PARAMETER_SERVER,
    SYNC_RING_ALLREDUCE,
    SYNC_ZERO1,
    SYNC_ZERO2,
    SYNC_ZERO3,
    SYNC_HSDP,
    SYNC__COUNT
} sync_scheme;

/* Arithmetic precision of training. fp32 and tf32 keep 4-byte activations
 * and gradients (tf32 only changes how Tensor Cores multiply); fp16 and
 * bf16 are mixed precision as frameworks run it: 2-byte activations and
 * gradients, fp32 master weights. */
typedef enum { PREC_FP32, PREC_TF32, PREC_FP16, PREC_BF16, PREC__COUNT } precision;
const char *precision_name(precision p);
int precision_from_name(const char *s); /* -1 if unknown */
/* Bytes of one activation or gradient element moved or stored. */
double precision_elem_bytes(precision p);

/* Efficiency classes of operators for the roofline. */
enum { OPC_CONV, OPC_LINEAR, OPC_POOL, OPC_ELEMENTWISE, OPC__COUNT };

/* The compute constants of one precision (see gpu_spec). */
typedef struct gpu_consts {
    double peak_tflops;
    double efficiency[OPC__COUNT];
    double memory_efficiency, winograd_speedup, kernel_overhead_us, saturation_gflop, step_overhead_ms;
} gpu_consts;

/* Where a GPU constant comes from (the file's "provenance", per precision):
 * fitted to published measurements, a datasheet figure, derived from other
 * constants at a datasheet ratio, copied from another GPU, or an assumed
 * value; unknown where the file does not say. */
typedef enum { TRUST_UNKNOWN, TRUST_FITTED, TRUST_DATASHEET, TRUST_DERIVED, TRUST_COPIED, TRUST_ASSUMED } const_trust;
/* The constants of gpu_consts a provenance names (GC_GEMM: the conv and
 * linear efficiency). */
enum { GC_PEAK, GC_GEMM, GC_MEMORY, GC_WINOGRAD, GC_KERNEL, GC_SATURATION, GC_STEP, GC__COUNT };

/* The fields below name are the fp32 constants; prec[p] (where has_prec[p])
 * holds another precision's, each field not given in the file taken from
 * fp32 when it was read. cluster_gpu_consts gives either. */
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
    gpu_consts prec[PREC__COUNT]; /* [PREC_FP32] unused: the fields above */
    unsigned char has_prec[PREC__COUNT];
    unsigned char trust[PREC__COUNT][GC__COUNT]; /* const_trust of each constant */
} gpu_spec;

/* How collectives (ring all-reduce) are charged: NCCL's alpha-beta form,
 * latency per call plus per ring step, and gradient buckets. */
typedef struct collective_spec {
    double call_latency_us;      /* per all-reduce call */
    double intra_step_us;        /* per ring step whose hops stay in a node */
    double inter_step_us;        /* per ring step with a hop between nodes */
    double bucket_mb;            /* gradient bucket, MiB (2^20 bytes); 0: one call per layer */
    int nccl_algorithms;         /* 1: NCCL's choice of ring/tree and LL/LL128/Simple by size; 0: ring/Simple */
    int pcie;                    /* 1: GPUs of a node meet over PCIe (NCCL's PCI latencies, no LL128) */
} collective_spec;

/* A software stack (framework, version and what it adds to the GPU's
 * kernels), separate from the GPU: a cluster file's "stack" block or a
 * "layerwise-stack/1" file (data/stacks/, `--stack NAME`). The GPU's
 * constants are those of its reference stack (NVIDIA's containers, or the
 * paper's framework for the P100); a stack changes them only where it gives
 * a figure. Without a stack (given = 0) a cluster prices exactly as its
 * file says. See data/doc/cost-model.md, Software stacks. */
typedef struct stack_spec {
    int given;                   /* 0: no stack; every field below unused */
    char name[64], framework[128], version[128];
    double kernel_overhead_us;   /* per kernel; < 0: the GPU's */
    double step_overhead_ms;     /* per step outside the kernels; < 0: the GPU's */
    double gemm_scale[PREC__COUNT]; /* multiplies the conv and linear efficiency (1: the reference stack's) */
    double winograd_speedup;     /* replaces the GPU's where it has one (> 1); < 0: the GPU's */
    double grad_sync_bytes;      /* bytes a gradient element is summed in; 0: the training precision's */
    int overlap;                 /* the simulator's default (sim_overlap: 0 none, 1 full, 2 ddp); -1: ddp */
    double bucket_mb;            /* gradient bucket, MiB; < 0: the cluster's */
    int conv_nchw;               /* "conv_layout": 1 "nchw": fp16/bf16 convolutions on NCHW tensors, which
                                  * cuDNN transposes around its NHWC Tensor Core kernels; 0 "nhwc" */
} stack_spec;

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
    precision precision;         /* in use: the file's default, or a what-if */
    collective_spec coll;
    stack_spec stack;            /* the file's "stack" block or --stack's; given = 0: none */
    int n_overrides;
    link_override *overrides;
} cluster;

int cluster_gpus(const cluster *c);
int cluster_node_of(const cluster *c, int dev);
/* The link between two distinct devices (overrides first, then intra/inter). */
link_spec cluster_link(const cluster *c, int a, int b);
/* Seconds to move `bytes` from a to b (0 when a == b). */
double cluster_transfer_s(const cluster *c, int a, int b, double bytes);

/* The GPU's constants for precision p, the stack's overheads and GEMM
 * scale applied; -1 (and *out untouched) where the file gives no figures
 * for it. */
int cluster_gpu_consts(const cluster *c, precision p, gpu_consts *out);
/* Sets c->precision, or fails (exit 2) naming the cluster when its GPU has
 * no figures for p. */
int cluster_set_precision(cluster *c, precision p, lw_error *err);

/* Where constant k (GC_*) of the GPU at precision p comes from (the file's
 * "provenance"; TRUST_UNKNOWN where it does not say). */
const_trust cluster_const_trust(const cluster *c, precision p, int k);
/* "fitted", "datasheet", "derived", "copied", "assumed" or "unknown". */
const char *trust_name(const_trust t);
/* The constant's field name ("efficiency" for GC_GEMM) and its words ("GEMM efficiency"). */
const char *gpu_const_key(int k);
const char *gpu_const_words(int k);
/* Not fitted and not a datasheet figure: derived, copied or assumed. */
int trust_unfitted(const_trust t);

/* Bytes one gradient element is summed in by the sync: the stack's, else
 * fp32 (4) at every precision (COST_GRAD_SYNC_BYTES). */
double cluster_grad_sync_bytes(const cluster *c);
/* Puts stack s (given = 1) in place of the cluster's: its bucket replaces
 * the cluster's where it gives one (the GPU's constants stay as read; the
 * stack applies where they are asked for, so a second stack replaces the
 * first instead of compounding). */
void cluster_set_stack(cluster *c, const stack_spec *s);
/* A "layerwise-stack/1" document (data/stacks/NAME.json) into *s; 0, or -1
 * with err naming the file and line (exit 2). */
int stack_from_json(const char *text, size_t len, const char *label, stack_spec *s, lw_error *err);

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
