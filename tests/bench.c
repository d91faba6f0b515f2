/*
 * bench: the figures `make bench` prints. For each network and GPU count:
 * configs per layer, nodes, edges, folds and eliminations, nodes left, time
 * to build the cost tables and to search with folds and without (`bench
 * EXE --search-table` prints only those rows for VGG-16 and Inception-v3
 * at 16 and 64 GPUs); then the whole `layerwise search` process
 * (wall time and peak memory, run as a child), and the what-if operations
 * the TUI performs (sync toggle, GPU count change, pin) on Inception-v3 and
 * GPT-2 XL.
 * Times are the best of a few repetitions, so one slow run does not hide
 * what the code can do; nothing here asserts a time (targets are printed).
 * `bench LAYERWISE --whatifs` runs the what-if sections alone, and
 * `--whatifs-transformer` those on GPT-2 XL at 8 GPUs (issue 32 item 8).
 */
#define _POSIX_C_SOURCE 200809L
#include "cost_sharding.h"
#include "many_layers.h"
#include "memsearch.h"
#include "net_json.h"
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "refine.h"
#include "sim.h"
#include "strategy.h"

#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

/* Best time of `reps` searches of g, folds on or off; the last result
 * stays in *out (the caller frees it). */
static double time_search(const cost_graph *g, int fold, int reps, search_result **out)
{
    search_options o;
    search_options_init(&o);
    o.fold = fold;
    double best = 1e30;
    *out = NULL;
    for (int k = 0; k < reps; k++) {
        search_result_free(*out);
        double t0 = lw_now();
        *out = search_run_with(g, &o, NULL, NULL, NULL);
        double t1 = lw_now();
        if (!*out) {
            fprintf(stderr, "bench: search failed\n");
            exit(1);
        }
        if (t1 - t0 < best) best = t1 - t0;
    }
    return best;
}

/* One row of the search table: the tables built (best of reps), then the
 * search with folds (the default) and without (the paper's Algorithm 1),
 * alternately, best of at least 3 each, in this process; both must find
 * the same cost. Counts are the folded search's. */
static void bench_row(const char *net_name, const char *cl_name, int gpus, int reps)
{
    lw_error err = {0};
    network *net = plan_load_network(net_name, &err);
    cluster *cl = plan_load_cluster(cl_name, &err);
    if (!net || !cl) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
    }
    double best_build = 1e30;
    cost_model *m = NULL;
    for (int k = 0; k < reps; k++) {
        cost_model_free(m);
        double t0 = lw_now();
        m = cost_model_build(net, cl, NULL, gpus, 32L * gpus, &err);
        double t1 = lw_now();
        if (!m) {
            fprintf(stderr, "bench: %s\n", err.msg);
            exit(1);
        }
        if (t1 - t0 < best_build) best_build = t1 - t0;
    }
    cost_graph *g = cost_model_graph(m);
    int sreps = reps < 3 ? 3 : reps;
    double best_fold = 1e30, best_paper = 1e30;
    search_result *r = NULL, *p = NULL;
    for (int k = 0; k < sreps; k++) { /* alternated, so a busy spell slows both */
        search_result_free(r);
        search_result_free(p);
        double tf = time_search(g, 1, 1, &r), tp = time_search(g, 0, 1, &p);
        if (tf < best_fold) best_fold = tf;
        if (tp < best_paper) best_paper = tp;
    }
    if (r->cost != p->cost && fabs(r->cost - p->cost) > 1e-9 * fabs(p->cost)) {
        fprintf(stderr, "bench: %s %s %d GPUs: folded search %.17g, paper's %.17g\n", net_name, cl_name, gpus,
                r->cost, p->cost);
        exit(1);
    }
    int cmax = 0;
    double csum = 0;
    for (int i = 0; i < m->n_layers; i++) {
        if (m->n_configs[i] > cmax) cmax = m->n_configs[i];
        csum += m->n_configs[i];
    }
    int nn = 0, ne = 0, nf = 0;
    for (int s = 0; s < r->n_steps; s++) {
        if (r->steps[s].kind == ELIM_NODE) nn++;
        else if (r->steps[s].kind == ELIM_FOLD) nf++;
        else ne++;
    }
    printf("%-13s %-10s %5d %6d %6.1f %6d %6d %6d %6d %6d %5d %10.1f %10.2f %10.2f %6.1fx\n", net_name, cl_name, gpus,
           cmax, csum / m->n_layers, m->n_layers, m->n_edges, nf, nn, ne, r->n_left, best_build * 1e3, best_fold * 1e3,
           best_paper * 1e3, best_paper / best_fold);
    fflush(stdout);
    search_result_free(r);
    search_result_free(p);
    cg_free(g);
    cost_model_free(m);
    net_free(net);
    cluster_free(cl);
}

static void search_table_header(void)
{
    printf("%-13s %-10s %5s %6s %6s %6s %6s %6s %6s %6s %5s %10s %10s %10s %7s\n", "network", "cluster", "GPUs",
           "C max", "C avg", "nodes", "edges", "folds", "n-elim", "e-elim", "left", "tables ms", "search ms",
           "no-fold ms", "speedup");
}

/* The yardstick every target is printed against, run in this process so a
 * busy machine slows both alike: a plain C min-plus loop doing n node
 * eliminations of k x k tables (C[i][l] = min_j A[i][j] + B[j][l], the
 * result fed to the next one), the work Algorithm 1 does per node. Best of
 * reps, seconds. With scalar set, the loop as the issue that set the
 * targets timed it (about 1 s for 121 of 210x210 there): the minimum over
 * j taken one term at a time for each (i, l), B read down a column;
 * otherwise the i-j-l order, whose inner loop over a row gcc vectorises at
 * -O2 (several times faster, and the stricter yardstick). */
static double minplus_loop(int n, int k, int reps, int scalar)
{
    size_t kk = (size_t)k * k;
    double *A = malloc(sizeof(double) * kk), *B = malloc(sizeof(double) * kk), *C = malloc(sizeof(double) * kk);
    unsigned x = 12345;
    for (size_t q = 0; q < kk; q++) {
        x = x * 1103515245u + 12345u;
        B[q] = (double)(x >> 8) / (double)(1u << 24);
    }
    double best = 1e30, sink = 0;
    for (int r = 0; r < reps; r++) {
        for (size_t q = 0; q < kk; q++) A[q] = B[(q * 7) % kk];
        double t0 = lw_now();
        for (int e = 0; e < n; e++) {
            for (int i = 0; i < k && scalar; i++)
                for (int l = 0; l < k; l++) {
                    double c = 1e300;
                    for (int j = 0; j < k; j++) {
                        double v = A[(size_t)i * k + j] + B[(size_t)j * k + l];
                        c = v < c ? v : c;
                    }
                    C[(size_t)i * k + l] = c;
                }
            for (int i = 0; i < k && !scalar; i++) {
                double *c = &C[(size_t)i * k];
                for (int l = 0; l < k; l++) c[l] = 1e300;
                for (int j = 0; j < k; j++) {
                    double a = A[(size_t)i * k + j];
                    const double *b = &B[(size_t)j * k];
                    for (int l = 0; l < k; l++) c[l] = a + b[l] < c[l] ? a + b[l] : c[l];
                }
            }
            double *t = A;
            A = C;
            C = t;
        }
        double t = lw_now() - t0;
        sink += A[0];
        if (t < best) best = t;
    }
    free(A);
    free(B);
    free(C);
    if (sink < 0) printf("%g\n", sink); /* never: keeps the loop */
    return best;
}

/* Runs argv (output to /dev/null) reps times: the best wall seconds, and
 * the largest peak RSS (KiB) in *rss; exits on a failed run. */
static double run_timed(char *const argv[], int reps, long *rss)
{
    double best = 1e30;
    *rss = 0;
    for (int k = 0; k < reps; k++) {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1 /* O_WRONLY */, 0);
        pid_t pid;
        double t0 = lw_now();
        if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
            fprintf(stderr, "bench: cannot run %s\n", argv[0]);
            exit(1);
        }
        int st;
        struct rusage ru;
        wait4(pid, &st, 0, &ru);
        double t = lw_now() - t0;
        posix_spawn_file_actions_destroy(&fa);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "bench:");
            for (int i = 0; argv[i]; i++) fprintf(stderr, " %s", argv[i]);
            fprintf(stderr, " failed\n");
            exit(1);
        }
        if (t < best) best = t;
        if (ru.ru_maxrss > *rss) *rss = ru.ru_maxrss;
    }
    return best;
}

/* Runs the real program; returns wall seconds and peak RSS in MiB. */
static double bench_cmd(const char *exe, const char *cmd, const char *net, const char *cl, const char *gpus,
                        const char *extra, int reps, int ref_k, int plain_ref, const char *target)
{
    /* the yardstick (120 or 121 eliminations of ref_k x ref_k), measured
     * again right before, so both see the same machine */
    const int n_elim = ref_k == 70 ? 120 : 121, ref_reps = ref_k == 70 ? 5 : 2;
    double ref = ref_k ? minplus_loop(n_elim, ref_k, ref_reps, 0) : 0;
    double ref_scalar = ref_k && plain_ref ? minplus_loop(n_elim, ref_k, ref_reps, 1) : 0;
    char *argv[] = {(char *)exe, (char *)cmd, "-n", (char *)net, "-c", (char *)cl, "-g", (char *)gpus, "--json",
                    (char *)extra, extra ? "data" : NULL, NULL};
    long rss;
    double best = run_timed(argv, reps, &rss);
    const char *base = strrchr(cl, '/') ? strrchr(cl, '/') + 1 : cl;
    char what[160];
    snprintf(what, sizeof what, "%s%s -n %s -c %.*s -g %s", cmd, extra ? " -s data" : "", net,
             (int)(strlen(base) > 5 && strcmp(base + strlen(base) - 5, ".json") == 0 ? strlen(base) - 5 : strlen(base)),
             base, gpus);
    if (ref > 0)
        printf("  %-46s %7.3f s %6.2fx the %dx%d loop (%.3f s) %6.1f MiB", what, best, best / ref, ref_k, ref_k, ref,
               rss / 1024.0);
    else
        printf("  %-46s %7.3f s %6.1f MiB", what, best, rss / 1024.0);
    if (target) printf("   target %s", target);
    if (ref_scalar > 0) printf(" (%.2fx the plain loop: %.3f s)", best / ref_scalar, ref_scalar);
    printf("\n");
    fflush(stdout);
    return best;
}

/* The whole process on a transformer in a setting that trains (bf16 or
 * fp16, a per-GPU batch that fits: where nothing fits, the memory-capped
 * search spends its time proving so): wall seconds and peak RSS. */
static void bench_transformer(const char *exe, const char *net, const char *cl, const char *gpus,
                              const char *prec, const char *bpg, int reps, const char *target)
{
    char *argv[] = {(char *)exe, "search", "-n", (char *)net, "-c", (char *)cl, "-g", (char *)gpus, "--precision",
                    (char *)prec, "--batch-per-gpu", (char *)bpg, "--json", NULL};
    long rss;
    double best = run_timed(argv, reps, &rss);
    char what[160];
    snprintf(what, sizeof what, "search -n %s -c %s -g %s --precision %s --batch-per-gpu %s", net, cl, gpus, prec, bpg);
    printf("  %-76s %7.3f s %6.1f MiB   target %s\n", what, best, rss / 1024.0, target);
    fflush(stdout);
}

static void bench_process(const char *exe, const char *net, const char *cl, const char *gpus, int reps)
{
    bench_cmd(exe, "search", net, cl, gpus, NULL, reps, 0, 0, NULL);
}

/* What the TUI queues after a change (ui/app.c, app_prefetch_next): the
 * next GPU count (down at the cluster's top), the batch doubled and halved,
 * the GPU count the other way. */
static void tui_prefetch(plan *p)
{
    plan_prefetch_item next[4];
    int n = 0, g = p->gpus, total = cluster_gpus(p->cl);
    for (int i = 0; i < 4; i++) next[i] = (plan_prefetch_item){p->set, NULL};
    next[n++].set.gpus = g < total ? g * 2 : g / 2;
    next[n++].set.batch_per_gpu = p->set.batch_per_gpu * 2;
    next[n++].set.batch_per_gpu = p->set.batch_per_gpu / 2;
    if (g < total && g > 1) next[n++].set.gpus = g / 2;
    plan_prefetch_list(p, next, n);
}

/* plan_apply of new settings (gpus, batch per GPU; 0: keep) and, when cl
 * is not NULL, a new cluster. */
static int set_to(plan *p, int gpus, long batch_per_gpu, const cluster *cl, lw_error *err)
{
    plan_settings s = p->set;
    if (gpus) s.gpus = gpus;
    if (batch_per_gpu) s.batch_per_gpu = batch_per_gpu;
    return plan_apply(p, &(plan_change){.set = &s, .cl = cl}, err);
}

/* What the memory-capped search did in the last timed what-if that ran
 * it: proven, or stopped at its time limit with the gap left; "" when the
 * optimum fitted. whatif_line prints and clears it, so a figure near
 * PLAN_MEMSEARCH_TIME_S reads as the limit it is, not as a speed. */
static char bench_capped[160];

static void note_capped(const plan *p)
{
    const plan_memory *mo = plan_memory_of(p);
    if (!mo || !mo->constrained) return;
    if (mo->proven_optimal)
        snprintf(bench_capped, sizeof bench_capped, "capped search proven: %ld subproblems", mo->subproblems);
    else
        snprintf(bench_capped, sizeof bench_capped, "capped search at its time limit: %ld subproblems, gap %.1f%%",
                 mo->subproblems, 100.0 * (1.0 - mo->lower_bound_ms / plan_best_eval(p)->total_ms));
}

/* Applies an edited copy of the cluster and times only that; the plan goes
 * back to the cluster it had, untimed. Returns plan_apply's status; *secs is
 * the time of the edit. Frees both clusters. */
static int time_cluster_edit(plan *p, cluster *orig, cluster *edited, double *secs, lw_error *err)
{
    double t0 = lw_now();
    int rc = plan_apply(p, &(plan_change){.cl = edited}, err);
    *secs = lw_now() - t0;
    if (!rc) note_capped(p);
    if (!rc) rc = set_to(p, 0, 0, orig, err);
    cluster_free(orig);
    cluster_free(edited);
    return rc;
}

/* time_cluster_edit of the plan's cluster with the inter-node bandwidth
 * doubled (its seconds in *secs). */
static int time_inter_bw_doubled(plan *p, double *secs, lw_error *err)
{
    cluster *orig = cluster_clone(p->cl), *edited = cluster_clone(p->cl);
    edited->inter.bandwidth_gbs *= 2;
    return time_cluster_edit(p, orig, edited, secs, err);
}

/* The GPU count the what-ifs start from (whatifs sets it). */
static int bench_g = 16;
static const char *bench_net = "inception_v3"; /* the network of the what-ifs */
static long bench_b = 32;                      /* the per-GPU batch they start from */

/* A precision the cluster's GPU has, other than the one in use; -1 if none. */
static int other_precision(const cluster *c)
{
    gpu_consts k;
    for (int q = 0; q < PREC__COUNT; q++)
        if (q != (int)c->precision && cluster_gpu_consts(c, (precision)q, &k) == 0) return q;
    return -1;
}

/* A TUI's plan (as p's) at half the what-ifs' GPU count, its first
 * model's counts kept (the user reads the screen); NULL with err set. */
static plan *tui_plan_at_half(const plan *p, lw_error *err)
{
    plan_settings half = {bench_g / 2, bench_b, 0, 0};
    plan *q = plan_open(plan_load_network(bench_net, err), cluster_clone(p->cl), NULL,
        &(plan_options){.set = half, .whatifs = 1}, err);
    if (q) plan_counts_wait(q);
    return q;
}

static double best_of(int reps, plan *p, int what, lw_error *err)
{
    double best = 1e30;
    for (int k = 0; k < reps; k++) {
        /* the user reads the screen while the prefetch worker keeps the
         * counts of the last what-if that computed entries (plan.h,
         * plan_counts_wait); cases 17-19 time one that does not wait so */
        plan_counts_wait(p);
        double t0 = lw_now();
        int rc = 0;
        switch (what) {
        case 0: /* sync toggle */
            rc = plan_apply(p,
                            &(plan_change){.sync_set = 1,
                                           .sync = p->cl->sync == SYNC_PARAMETER_SERVER ? SYNC_RING_ALLREDUCE
                                                                                        : SYNC_PARAMETER_SERVER},
                            err);
            break;
        case 1: /* GPU count 16 -> 8 */
        case 4: /* GPU count 8 -> 16 */
            rc = set_to(p, what == 1 ? bench_g : bench_g / 2, 0, NULL, err);
            if (rc) break;
            t0 = lw_now();
            rc = set_to(p, what == 1 ? bench_g / 2 : bench_g, 0, NULL, err);
            break;
        case 2: /* pin a layer, re-optimise */
        {
            plan_pin pin = {p->net->n_layers / 2, k % 2 ? -1 : 1};
            rc = plan_apply(p, &(plan_change){.n_pins = 1, .pins = &pin}, err);
        }
            break;
        case 5: /* GPU count 16 -> 8, prefetched while the user looks at the screen */
        case 6: /* 8 -> 16, prefetched */
        case 7: /* batch 32 -> 64 per GPU, prefetched */
        case 8: /* batch 32 -> 16 per GPU, prefetched */
        {
            rc = set_to(p, what == 6 ? 8 : 16, 32, NULL, err);
            if (rc) break;
            plan_settings next = p->set;
            if (what == 5) next.gpus = 8;
            if (what == 6) next.gpus = 16;
            if (what == 7) next.batch_per_gpu = 64;
            if (what == 8) next.batch_per_gpu = 16;
            tui_prefetch(p);
            struct timespec think = {1, 0};
            nanosleep(&think, NULL);
            t0 = lw_now();
            rc = plan_apply(p, &(plan_change){.set = &next}, err);
            break;
        }
        case 9:  /* inter-node bandwidth doubled (the cluster editor), not built ahead */
        case 10: /* the same, built ahead while the cluster screen showed the field */
        {
            rc = set_to(p, bench_g, bench_b, NULL, err);
            if (rc) break;
            cluster *orig = cluster_clone(p->cl), *edited = cluster_clone(p->cl);
            edited->inter.bandwidth_gbs *= 2;
            if (what == 10) {
                plan_prefetch_item it = {p->set, edited};
                plan_prefetch_list(p, &it, 1);
                struct timespec think = {1, 0};
                nanosleep(&think, NULL);
            }
            double t_edit;
            rc = time_cluster_edit(p, orig, edited, &t_edit, err);
            t0 = lw_now() - t_edit;
            break;
        }
        case 11: /* why not? every config of one layer at once (min-marginals) */
        {
            int li = p->net->n_layers / 2;
            double *tot = malloc(sizeof(double) * (size_t)p->cm->n_configs[li]);
            rc = plan_whynot_totals(p, li, tot) != 0;
            if (rc) snprintf(err->msg, sizeof err->msg, "plan_whynot_totals refused");
            free(tot);
            break;
        }
        case 12: /* why not? one config by a pinned search, as before */
            plan_cost_with_pin(p, p->net->n_layers / 2, 0, NULL);
            break;
        case 13: /* intra-node latency doubled (the cluster editor), not built ahead */
        case 14: /* precision changed (fp32 <-> the other the GPU has), not built ahead */
        {
            cluster *orig = cluster_clone(p->cl), *edited = cluster_clone(p->cl);
            if (what == 13) edited->intra.latency_us *= 2;
            else edited->precision = (precision)other_precision(edited);
            double t_edit;
            rc = time_cluster_edit(p, orig, edited, &t_edit, err);
            t0 = lw_now() - t_edit;
            break;
        }
        case 15: /* a global batch the largest sample degree does not divide: its configs' entries computed */
        {
            rc = set_to(p, bench_g, bench_b, NULL, err);
            if (rc) break;
            plan_settings odd = p->set;
            odd.global_batch = bench_b * bench_g + bench_g / 2;
            t0 = lw_now();
            rc = plan_apply(p, &(plan_change){.set = &odd}, err);
            double t = lw_now() - t0;
            if (!rc) rc = set_to(p, bench_g, bench_b, NULL, err); /* built again, untimed */
            t0 = lw_now() - t;
            break;
        }
        case 16: /* up to a GPU count the kept counts lack (a TUI started at half the count, then doubled): the
                  * entries of configs on more GPUs than that computed */
        {
            plan *q = tui_plan_at_half(p, err);
            if (!q) {
                rc = 1;
                break;
            }
            t0 = lw_now();
            rc = set_to(q, bench_g, 0, NULL, err);
            double t = lw_now() - t0;
            plan_free(q);
            t0 = lw_now() - t;
            break;
        }
        case 17: /* inter-node bandwidth doubled right after case 16's what-if, before the worker has kept its
                  * counts: the plan's choice (p->counts_wait 0), which gives them up when the job would take
                  * longer than answering again as case 16 did */
        case 18: /* the same, waiting for them, then re-pricing (p->counts_wait 1) */
        {
            plan *q = tui_plan_at_half(p, err);
            if (!q) {
                rc = 1;
                break;
            }
            q->counts_wait = what == 18;
            rc = set_to(q, bench_g, 0, NULL, err);
            double t_edit = 0;
            if (!rc) rc = time_inter_bw_doubled(q, &t_edit, err);
            t0 = lw_now() - t_edit;
            plan_free(q);
            break;
        }
        case 19: /* inter-node bandwidth doubled right after the TUI opens, before its first model's counts (built
                  * from scratch on the worker) are kept: the plan's choice (p->counts_wait 0) */
        {
            plan_settings at = {bench_g, bench_b, 0, 0};
            plan *q = plan_open(plan_load_network(bench_net, err), cluster_clone(p->cl), NULL,
                &(plan_options){.set = at, .whatifs = 1}, err);
            if (!q) {
                rc = 1;
                break;
            }
            double t_edit = 0;
            rc = time_inter_bw_doubled(q, &t_edit, err);
            t0 = lw_now() - t_edit;
            plan_free(q);
            break;
        }
        case 3: /* batch change 32 -> 64 per GPU (bench_b -> twice) */
            rc = set_to(p, 0, bench_b, NULL, err);
            if (rc) break;
            t0 = lw_now();
            rc = set_to(p, 0, 2 * bench_b, NULL, err);
            if (!rc) note_capped(p);
            break;
        }
        double t = lw_now() - t0;
        if (rc) {
            fprintf(stderr, "bench: %s\n", err->msg);
            exit(1);
        }
        if (t < best) best = t;
    }
    return best * 1e3;
}

/* The step simulator (sim_run, data flow) on one setting and strategy:
 * best of reps, ms. */
static void bench_sim(const char *net_name, const char *cl_name, int gpus, int reps)
{
    lw_error err = {0};
    plan_settings set = {gpus, 32, 0, 0};
    plan *p = plan_open(plan_load_network(net_name, &err), plan_load_cluster(cl_name, &err), NULL,
        &(plan_options){.set = set}, &err);
    if (!p) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
    }
    int *ci = malloc(sizeof(int) * (size_t)p->net->n_layers);
    const char *names[3] = {"optimum", "data", "owt"};
    for (int w = 0; w < 3; w++) {
        if (w == 0) memcpy(ci, p->best, sizeof(int) * (size_t)p->net->n_layers);
        else strategy_baseline(p->cm, w == 1 ? BASE_DATA : BASE_OWT, ci);
        double best = 1e30;
        int n_tasks = 0;
        double step = 0, eq1 = 0;
        for (int r = 0; r < reps; r++) {
            double t0 = lw_now();
            sim_result *s = sim_run(p->cm, ci, NULL);
            double t = lw_now() - t0;
            if (t < best) best = t;
            n_tasks = s->n_tasks;
            step = s->step_ms;
            eq1 = s->eq1_ms;
            sim_free(s);
        }
        printf("  simulate %-12s %-9s %3d GPUs %-8s %7d tasks  %8.1f ms   (step %.1f ms simulated, %.1f ms Eq. 1)\n",
               net_name, cl_name, gpus, names[w], n_tasks, best * 1e3, step, eq1);
    }
    free(ci);
    plan_free(p);
}

/* One what-if figure: ms, and its ratio to the 70x70 loop measured just
 * before (ref, seconds). */
static void whatif_line(const char *what, double ms, double ref)
{
    printf("  %-52s %8.1f ms %6.2fx the 70x70 loop%s%s\n", what, ms, ms / 1e3 / ref, bench_capped[0] ? "; " : "",
           bench_capped);
    bench_capped[0] = 0;
    fflush(stdout);
}

/* The what-ifs the TUI performs, on net at gpus GPUs of cl (GPU count
 * changes go to half and back); few: the keys only, best of 1 or 2. */
static void whatifs_at(const char *net, const char *cl, const char *prec, long batch, int gpus, int few,
                       const char *target)
{
    printf("\nwhat-if on %s, %s%s%s, %d GPUs, batch %ld per GPU: new optimum (engine side; target %s)\n", net, cl,
           prec ? " " : "", prec ? prec : "", gpus, batch, target);
    lw_error err = {0};
    plan_settings set = {gpus, batch, 0, 0};
    cluster *c = plan_load_cluster(cl, &err);
    if (c && prec && cluster_set_precision(c, (precision)precision_from_name(prec), &err) != 0) {
        cluster_free(c);
        c = NULL;
    }
    /* the TUI's plan: its first model answers, then gets the counts what-ifs re-price */
    double t_open = lw_now();
    plan *p = c ? plan_open(plan_load_network(net, &err), c, NULL, &(plan_options){.set = set, .whatifs = 1}, &err)
                : NULL;
    if (!p) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
    }
    t_open = lw_now() - t_open;
    double t_counts = lw_now();
    plan_counts_wait(p);
    t_counts = lw_now() - t_counts;
    printf("  (the TUI's first model and optimum: %.2f s; its counts for what-ifs, kept on the prefetch worker: "
           "%.1f MB, %.2f s later)\n",
           t_open, (double)cost_model_kept_bytes(p->cm) / 1048576.0, t_counts);
    int r = few ? 1 : 3, r5 = few ? 2 : 5;
    bench_g = gpus;
    bench_net = net;
    bench_b = batch;
    double ref = minplus_loop(120, 70, 3, 0);
    whatif_line("sync scheme toggle", best_of(r5, p, 0, &err), ref);
    whatif_line("pin one layer", best_of(r5, p, 2, &err), ref);
    char what[80];
    snprintf(what, sizeof what, "GPU count %d -> %d", gpus, gpus / 2);
    whatif_line(what, best_of(r, p, 1, &err), ref);
    snprintf(what, sizeof what, "GPU count %d -> %d", gpus / 2, gpus);
    whatif_line(what, best_of(r, p, 4, &err), ref);
    snprintf(what, sizeof what, "per-GPU batch %ld -> %ld", batch, 2 * batch);
    whatif_line(what, best_of(r, p, 3, &err), ref);
    snprintf(what, sizeof what, "global batch %ld (degree %d does not divide it)", batch * gpus + gpus / 2, gpus);
    whatif_line(what, best_of(1, p, 15, &err), ref);
    snprintf(what, sizeof what, "GPU count %d -> %d, never at %d before", gpus / 2, gpus, gpus);
    whatif_line(what, best_of(1, p, 16, &err), ref);
    whatif_line("inter-node GB/s doubled right after (no counts yet)", best_of(1, p, 17, &err), ref);
    whatif_line("the same, waiting for its counts", best_of(1, p, 18, &err), ref);
    whatif_line("inter-node GB/s doubled right after the TUI opens", best_of(1, p, 19, &err), ref);
    whatif_line("inter-node GB/s doubled", best_of(r, p, 9, &err), ref);
    whatif_line("intra-node latency doubled", best_of(r, p, 13, &err), ref);
    if (other_precision(p->cl) >= 0) whatif_line("precision changed", best_of(r, p, 14, &err), ref);
    else printf("  %-52s %8s\n", "precision changed", "n/a (the GPU has one precision)");
    fflush(stdout);
    {
        int li = p->net->n_layers / 2;
        double *tot = malloc(sizeof(double) * (size_t)p->cm->n_configs[li]);
        if (plan_whynot_totals(p, li, tot) == 0)
            whatif_line("why not? every config of a layer (min-marginals)", best_of(r, p, 11, &err), ref);
        else /* plan.h: min-marginals do not know what fits */
            printf("  %-52s %8s\n", "why not? every config of a layer (min-marginals)",
                   "n/a (the memory limit may bind: one search per config)");
        free(tot);
    }
    whatif_line("why not? one config (one pinned search)", best_of(r, p, 12, &err), ref);
    if (!few) {
        printf("  what the TUI prefetches after each change (1 s to read the screen first):\n");
        whatif_line("GPU count 16 -> 8, prefetched", best_of(2, p, 5, &err), ref);
        whatif_line("GPU count 8 -> 16, prefetched", best_of(2, p, 6, &err), ref);
        whatif_line("batch 32 -> 64, prefetched", best_of(2, p, 7, &err), ref);
        whatif_line("batch 32 -> 16, prefetched", best_of(2, p, 8, &err), ref);
        whatif_line("inter-node GB/s doubled, prefetched (cluster screen)", best_of(2, p, 10, &err), ref);
    }
    plan_free(p);
}

/* The what-ifs on a CNN at the cluster's own precision, batch 32 per GPU. */
static void whatifs(const char *net, const char *cl, int gpus, int few, const char *target)
{
    whatifs_at(net, cl, NULL, 32, gpus, few, target);
}

/* The memory-capped search alone on net at gpus GPUs and bpg per GPU, at
 * the GPU's memory, run to its end (or the plan's time limit): its CPU
 * seconds on this thread, so its speed shows where the host is shared and
 * the what-ifs above read as wall time. */
static void capped_cpu(const char *net, const char *cl, const char *prec, int gpus, long bpg)
{
    lw_error err = {0};
    cluster *c = plan_load_cluster(cl, &err);
    network *n = c ? plan_load_network(net, &err) : NULL;
    cost_model *m = NULL;
    if (n && cluster_set_precision(c, (precision)precision_from_name(prec), &err) == 0)
        m = cost_model_build(n, c, NULL, gpus, bpg * gpus, &err);
    if (!m) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
    }
    cost_graph *g = cost_model_graph(m);
    mem_table *t = plan_mem_table(m);
    plan_memory_settings ms = {0};
    double *room = malloc(sizeof(double) * (size_t)gpus);
    for (int k = 0; k < gpus; k++) room[k] = plan_memory_limit(&ms, c) - cost_fixed_bytes(m);
    memsearch_options o;
    memsearch_options_init(&o);
    o.time_limit_s = PLAN_MEMSEARCH_TIME_S;
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    memsearch_result *r = memsearch_run(g, t, room, &o);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    printf("  memory-capped search alone, %s, batch %ld per GPU: %.3f s of CPU, %.3f s wall, %s (%ld searches, "
           "%ld subproblems; %.2f ms, bound %.2f ms)\n",
           prec, bpg, cpu, r->elapsed_s,
           r->proven_optimal ? "proven" : r->status == MEMSEARCH_INFEASIBLE ? "nothing fits" : "not proven",
           r->searches, r->bb_nodes, r->cost, r->lower_bound);
    fflush(stdout);
    memsearch_result_free(r);
    free(room);
    mt_free(t);
    cg_free(g);
    cost_model_free(m);
    net_free(n);
    cluster_free(c);
}

/* Issue 32's target: every what-if at 8 GPUs on GPT-2 XL under 1 s, in the
 * setting bench_transformer's 8-GPU search trains in. */
static void whatifs_gpt2_xl(void)
{
    whatifs_at("gpt2_xl", "dgx1-v100", "fp16", 4, 8, 1, "< 1 s");
    capped_cpu("gpt2_xl", "dgx1-v100", "fp16", 8, 8);  /* per-GPU batch 4 -> 8 */
    capped_cpu("gpt2_xl", "dgx1-v100", "fp32", 8, 4);  /* precision changed */
    capped_cpu("gpt2_xl", "dgx1-v100", "fp32", 8, 8);  /* nothing fits: the proof that it does not */
}

/* Reading a strategy file of 20000 layers (the network limit) back:
 * tests/test_limits.c checks that it reads right; here, how fast. */
static void read_big_strategy(void)
{
    char *j = many_layers_net(NET_MAX_LAYERS, 0);
    lw_error err = {0};
    network *n = net_from_json(j, strlen(j), "big.json", &err);
    cluster *c = n ? plan_load_cluster("p100-4x4", &err) : NULL;
    cost_model *m = c ? cost_model_open(n, c, NULL, 2, 32, &err) : NULL;
    if (!m) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
    }
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    strategy_eval ev;
    strategy_evaluate(m, ci, &ev);
    char *doc = strategy_to_json(m, ci, &ev, "file", -1, NULL);
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = lw_now();
        if (strategy_from_json(m, doc, strlen(doc), "big.json", ci, &err) != 0) {
            fprintf(stderr, "bench: %s\n", err.msg);
            exit(1);
        }
        if (lw_now() - t0 < best) best = lw_now() - t0;
    }
    double ref = minplus_loop(120, 70, 3, 0);
    printf("\nreading a strategy of %d layers (eval -s FILE's read): %.1f ms, %.2fx the 70x70 loop\n", NET_MAX_LAYERS,
           best * 1e3, best / ref);
    free(doc);
    strategy_eval_free(&ev);
    free(ci);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
    free(j);
}

int main(int argc, char **argv)
{
    const char *exe = argc > 1 ? argv[1] : "build/layerwise";
    int quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
    if (argc > 2 && strcmp(argv[2], "--search-table") == 0) { /* only the folds' rows: VGG-16, Inception-v3 */
        search_table_header();
        const char *two[] = {"vgg16", "inception_v3"};
        for (int n = 0; n < 2; n++) {
            bench_row(two[n], "p100-4x4", 16, 3);
            bench_row(two[n], "h100-8x8", 64, 1);
        }
        return 0;
    }
    if (argc > 2 && strcmp(argv[2], "--whatifs") == 0) { /* the what-if sections alone */
        whatifs("inception_v3", "p100-4x4", 16, 0, "< 100 ms");
        whatifs("inception_v3", "h100-8x8", 16, 1, "< 100 ms");
        whatifs("inception_v3", "h100-8x8", 64, 1, "< 1 s");
        whatifs_gpt2_xl();
        return 0;
    }
    if (argc > 2 && strcmp(argv[2], "--whatifs-transformer") == 0) { /* GPT-2 XL's what-ifs alone */
        whatifs_gpt2_xl();
        return 0;
    }
    int targets = argc > 2 && strcmp(argv[2], "--targets") == 0; /* the search targets alone */
    printf("layerwise bench (%s threads for the t_x tables and large node eliminations; set LAYERWISE_THREADS "
           "to change)\n\n",
           getenv("LAYERWISE_THREADS") ? getenv("LAYERWISE_THREADS") : "one per core, up to 8,");
    printf("targets: the whole process, best of 3 (1 at 64 GPUs and up), with its ratio to a plain C min-plus\n"
           "loop (120 eliminations of 70x70 tables, or 121 of 210x210) run in this process just before it,\n"
           "in the order gcc vectorises; the ratio targets also against the same loop one term at a time\n"
           "(the plain loop: what the issue that set them timed at about 1 s)\n");
    bench_cmd(exe, "search", "inception_v3", "p100-4x4", "16", NULL, 3, 70, 1, "<= 3x");
    if (!quick) {
        bench_cmd(exe, "search", "inception_v3", "h100-8x8", "64", NULL, 1, 210, 1, "<= 0.5x");
        bench_cmd(exe, "search", "resnet50", "tests/fixtures/clusters/h100-32x8.json", "256", NULL, 1, 210, 0,
                  "< 5 s, 1 GB");
        bench_cmd(exe, "search", "resnet50", "tests/fixtures/clusters/dgx1-32x8.json", "256", NULL, 1, 210, 0,
                  "< 5 s, 1 GB");
        if (targets) return 0;
    }
    /* issue 32's targets: GPT-2 XL (48 blocks, 532 layers) at 8 and 64 GPUs,
     * the whole process; on a DGX-1V (8 GPUs) and 8 H100 nodes (64) */
    printf("transformers, the whole process (issue 32's targets), best of 3 (1 at 64 GPUs)\n");
    bench_transformer(exe, "gpt2", "dgx1-v100", "8", "fp16", "8", 3, "-");
    bench_transformer(exe, "gpt2_xl", "dgx1-v100", "8", "fp16", "4", 3, "< 1 s");
    if (!quick) bench_transformer(exe, "gpt2_xl", "h100-8x8", "64", "bf16", "4", 1, "< 10 s, 2 GB");
    const char *nets5[] = {"lenet5", "alexnet", "vgg16", "inception_v3", "resnet50"};
    for (int n = 0; n < 5; n++) {
        bench_cmd(exe, "eval", nets5[n], "tests/fixtures/clusters/h100-32x8.json", "256", "-s", 3, 70, 0, "<< 1 s");
        bench_cmd(exe, "eval", nets5[n], "tests/fixtures/clusters/dgx1-32x8.json", "256", "-s", 3, 70, 0, "<< 1 s");
    }
    printf("others:\n");
    bench_process(exe, "vgg16", "p100-4x4", "16", 3);
    bench_process(exe, "resnet50", "p100-4x4", "16", 3);
    if (!quick) {
        bench_process(exe, "resnet50", "h100-8x8", "64", 1);
        /* past 256 GPUs: the search where its tables fit this machine */
        bench_process(exe, "resnet50", "tests/fixtures/clusters/h100-128x8.json", "512", 1);
        bench_process(exe, "vgg16", "tests/fixtures/clusters/h100-128x8.json", "1024", 1);
    }
    printf("\n");
    printf("the exact search with folds (the default) and without (search --no-fold, the paper's Algorithm 1),\n"
           "best of 3 or more each, alternated in this process; step counts are the folded search's\n");
    search_table_header();
    const char *nets[] = {"lenet5", "alexnet", "vgg16", "inception_v3", "resnet50"};
    int gp[] = {1, 2, 4, 8, 16};
    for (int n = 0; n < 5; n++)
        for (int g = 0; g < 5; g++) bench_row(nets[n], "p100-4x4", gp[g], gp[g] >= 8 ? 3 : 2);
    if (!quick) {
        int hg[] = {32, 64};
        for (int n = 1; n < 5; n++)
            for (int g = 0; g < 2; g++) bench_row(nets[n], "h100-8x8", hg[g], 1);
    }
    whatifs("inception_v3", "p100-4x4", 16, quick, "< 100 ms");
    whatifs("inception_v3", "h100-8x8", 16, 1, "< 100 ms");
    if (!quick) whatifs("inception_v3", "h100-8x8", 64, 1, "< 1 s");
    whatifs_gpt2_xl();
    read_big_strategy();
    printf("\nstep simulator, data flow (best of 3; target: Inception-v3 64 GPUs < 1 s)\n");
    bench_sim("vgg16", "p100-4x4", 16, 3);
    bench_sim("inception_v3", "p100-4x4", 16, 3);
    bench_sim("inception_v3", "h100-8x8", 64, 3);
    {
        printf("\nrefine under the simulator, from the Eq. 1 optimum to a local optimum (target: VGG-16 16 GPUs < 5 s)\n");
        lw_error e2 = {0};
        plan_settings s16 = {16, 32, 0, 0};
        plan *q = plan_open(plan_load_network("vgg16", &e2), plan_load_cluster("p100-4x4", &e2), NULL,
            &(plan_options){.set = s16}, &e2);
        if (!q) {
            fprintf(stderr, "bench: %s\n", e2.msg);
            return 1;
        }
        refine_result rr;
        double t0 = lw_now(), c0 = (double)clock() / CLOCKS_PER_SEC;
        sim_refine(q->cm, q->best, NULL, 120, 1, &rr);
        /* CPU time too: on a shared machine the wall time says more about the neighbours */
        printf("  refine vgg16 p100-4x4 16 GPUs: %.2f s (%.2f s of CPU), %d passes, %ld strategies simulated, %s; "
               "simulated step %.2f -> %.2f ms, %d layers changed\n",
               lw_now() - t0, (double)clock() / CLOCKS_PER_SEC - c0, rr.passes, rr.evaluations,
               rr.local_optimum ? "local optimum" : "time limit", rr.start_ms, rr.best_ms, rr.n_changed);
        refine_result_free(&rr);
        plan_free(q);
    }
    return 0;
}
