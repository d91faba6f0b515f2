/*
 * Limits instead of hangs, and no half-written files.
 *
 * Absurd sizes — a 10^9-channel layer, 100 000 layers, 100 000 GPUs, a
 * batch of 10^12, a 10^6 kernel, a final step too big to solve — are
 * refused with a message that names the limit, quickly; sizes at the limit
 * load within bounded time. The big inputs are generated here, not
 * committed. Inputs the fuzzers found are replayed from
 * tests/fixtures/fuzz-regressions/.
 *
 * The CLI half runs the real program (the build's layerwise beside this
 * test's directory: build/layerwise, or build/asan/layerwise under
 * asan-tests, which then checks those runs for leaks too): its exit status
 * and messages, progress on a terminal (a pseudo-terminal here), and that
 * a failing or killed `search -o` / `export -o` leaves neither a partial
 * file nor a temporary.
 *
 * Run from the repository root (make check does).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "cluster.h"
#include "cost.h"
#include "net_json.h"
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "profile.h"
#include "search.h"
#include "strategy.h"
#include "test_helpers.h"
#include "many_layers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REG "tests/fixtures/fuzz-regressions/"

__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

/* ---------------------------------------------------------------- helpers */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Generous bounds: the sanitizer build is several times slower. */
#define QUICK_S 20.0

static cluster *cluster_str(const char *json, lw_error *err)
{
    return cluster_from_json(json, strlen(json), "limits.json", err);
}

#define ASSERT_REFUSED(obj, err, ...)                                                                             \
    do {                                                                                                         \
        cr_assert_null(obj, "accepted, expected a refusal");                                                     \
        cr_assert_neq((err).msg[0], 0, "refused without a message");                                            \
        const char *const want_[] = {__VA_ARGS__, NULL};                                                        \
        for (int k_ = 0; want_[k_]; k_++)                                                                        \
            cr_assert(strstr((err).msg, want_[k_]), "message \"%s\" should mention \"%s\"", (err).msg, want_[k_]); \
    } while (0)

/* A one-layer network around `layer` (a JSON object) on a c x h x w input. */
static char *one_layer_net(long c, long h, long w, const char *layer_json)
{
    lw_buf b = {0};
    lw_buf_printf(&b,
                  "{\"format\": \"layerwise-net/1\", \"name\": \"big\",\n"
                  " \"input\": {\"name\": \"data\", \"channels\": %ld, \"height\": %ld, \"width\": %ld},\n"
                  " \"layers\": [%s]}\n",
                  c, h, w, layer_json);
    return b.s;
}

/* A dense block: conv k reads the concat of the input and every conv
 * before it, so nothing can be eliminated and the final step gets them all. */
static char *dense_net(int n)
{
    lw_buf b = {0};
    lw_buf_printf(&b, "{\"format\": \"layerwise-net/1\", \"name\": \"dense%d\",\n"
                      " \"input\": {\"name\": \"data\", \"channels\": 16, \"height\": 32, \"width\": 32},\n"
                      " \"layers\": [\n", n);
    for (int k = 0; k < n; k++) {
        const char *src = "data";
        if (k > 0) {
            lw_buf_printf(&b, "  {\"name\": \"cat%d\", \"type\": \"concat\", \"inputs\": [\"data\"", k);
            for (int j = 0; j < k; j++) lw_buf_printf(&b, ", \"conv%d\"", j);
            lw_buf_printf(&b, "]},\n");
        }
        char s[32];
        snprintf(s, sizeof s, "cat%d", k);
        if (k > 0) src = s;
        lw_buf_printf(&b,
                      "  {\"name\": \"conv%d\", \"type\": \"conv2d\", \"inputs\": [\"%s\"], \"out_channels\": 16,"
                      " \"kernel\": 3, \"padding\": 1},\n", k, src);
    }
    lw_buf_printf(&b, "  {\"name\": \"out\", \"type\": \"concat\", \"inputs\": [\"data\"");
    for (int j = 0; j < n; j++) lw_buf_printf(&b, ", \"conv%d\"", j);
    lw_buf_printf(&b, "]}]}\n");
    return b.s;
}

static char *cluster_json(long nodes, long gpn, const char *extra)
{
    lw_buf b = {0};
    lw_buf_printf(&b,
                  "{\"format\": \"layerwise-cluster/1\", \"name\": \"big\", \"nodes\": %ld, \"gpus_per_node\": %ld,\n"
                  " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 700},\n"
                  " \"intra_node\": {\"bandwidth_gbs\": 20, \"latency_us\": 5},\n"
                  " \"inter_node\": {\"bandwidth_gbs\": 10, \"latency_us\": 8}%s}\n",
                  nodes, gpn, extra ? extra : "");
    return b.s;
}

static char *tmpdir(void)
{
    char *d = strdup("/tmp/lw-limits-XXXXXX");
    cr_assert_not_null(mkdtemp(d), "mkdtemp: %s", strerror(errno));
    return d;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

/* Names in dir, space-separated ("" when empty). */
static char *dir_listing(const char *dir)
{
    lw_buf b = {0};
    lw_buf_printf(&b, "%s", "");
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            lw_buf_printf(&b, "%s%s", b.len ? " " : "", e->d_name);
    closedir(d);
    return b.s;
}

static void rm_rf(const char *dir)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* The program of this build: ../layerwise beside this test's directory. */
static const char *lw_binary(void)
{
    static char path[PATH_MAX];
    if (path[0]) return path;
    const char *env = getenv("LW");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
        return path;
    }
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert(k > 0);
    exe[k] = 0;
    char *slash = strrchr(exe, '/');
    cr_assert_not_null(slash);
    *slash = 0;
    snprintf(path, sizeof path, "%.*s/../layerwise", PATH_MAX - 16, exe);
    cr_assert_eq(access(path, X_OK), 0, "%s: not built (make tests-bin builds it)", path);
    return path;
}

typedef struct run_result {
    int status;      /* exit status, or 128 + signal */
    char *out, *err; /* what it wrote; caller frees */
    double seconds;
} run_result;

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

/* Runs the program with args (NULL-terminated, without argv[0]). stderr
 * goes to a pseudo-terminal when pty_stderr, else a pipe. Kills it and
 * fails the test after timeout_s: a hang is what these tests look for. */
static run_result run_lw(const char *const *args, int pty_stderr, double timeout_s)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = lw_binary();
    for (int i = 0; args[i] && n < 62; i++) argv[n++] = args[i];
    argv[n] = NULL;

    int out_p[2], err_p[2] = {-1, -1}, master = -1;
    cr_assert_eq(pipe(out_p), 0);
    char slave_name[128] = "";
    if (pty_stderr) {
        master = posix_openpt(O_RDWR | O_NOCTTY);
        cr_assert(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0, "no pseudo-terminal: %s",
                  strerror(errno));
        cr_assert_eq(ptsname_r(master, slave_name, sizeof slave_name), 0);
    } else {
        cr_assert_eq(pipe(err_p), 0);
    }
    double t0 = now_s();
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int ein = -1;
        if (pty_stderr) {
            setsid();
            ein = open(slave_name, O_RDWR);
            if (ein < 0) _exit(126);
        } else {
            ein = err_p[1];
        }
        int nul = open("/dev/null", O_RDONLY);
        dup2(nul, 0);
        dup2(out_p[1], 1);
        dup2(ein, 2);
        for (int fd = 3; fd < 256; fd++) close(fd);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(out_p[1]);
    if (!pty_stderr) close(err_p[1]);
    int efd = pty_stderr ? master : err_p[0];
    lw_buf bo = {0}, be = {0};
    lw_buf_printf(&bo, "%s", "");
    lw_buf_printf(&be, "%s", "");
    int open_out = 1, open_err = 1, status = -1, done = 0;
    while (!done) {
        struct pollfd pf[2] = {{open_out ? out_p[0] : -1, POLLIN, 0}, {open_err ? efd : -1, POLLIN, 0}};
        poll(pf, 2, 50);
        char buf[4096];
        for (int k = 0; k < 2; k++) {
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t got = read(pf[k].fd, buf, sizeof buf - 1);
            if (got <= 0) {
                if (k == 0) open_out = 0;
                else open_err = 0;
                continue;
            }
            buf[got] = 0;
            lw_buf_printf(k == 0 ? &bo : &be, "%s", buf);
        }
        int st;
        if (status < 0 && waitpid(pid, &st, WNOHANG) == pid)
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        /* a pty's master reads what is left, then EIO, once the child is gone */
        done = status >= 0 && !open_out && !open_err;
        if (!done && now_s() - t0 > timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            cr_assert_fail("%s %s ... still running after %.0f s: a hang", argv[0], argv[1] ? argv[1] : "", timeout_s);
        }
    }
    close(out_p[0]);
    close(efd);
    run_result r = {status, bo.s, be.s, now_s() - t0};
    return r;
}

/* -------------------------------------------------------------- networks */

Test(limits_net, a_billion_input_channels_is_refused_with_the_limit)
{
    char *j = one_layer_net(1000000000L, 8, 8, "{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"]}");
    lw_error err = {0};
    network *n = net_str(j, &err);
    ASSERT_REFUSED(n, err, "channels", "16777216");
    cr_assert_eq(err.code, 2);
    free(j);
}

Test(limits_net, a_billion_output_channels_is_refused_with_the_limit)
{
    char *j = one_layer_net(3, 8, 8,
                            "{\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 1e9,"
                            " \"kernel\": 3}");
    lw_error err = {0};
    network *n = net_str(j, &err);
    ASSERT_REFUSED(n, err, "out_channels", "16777216");
    free(j);
    j = one_layer_net(3, 8, 8, "{\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"data\"], \"out_features\": 1000000000}");
    n = net_str(j, &err);
    ASSERT_REFUSED(n, err, "out_features", "16777216");
    free(j);
}

Test(limits_net, a_kernel_stride_or_padding_of_a_million_is_refused_with_the_limit)
{
    const char *fields[] = {"\"kernel\": 1000000", "\"kernel\": [3, 1000000]", "\"kernel\": 3, \"stride\": 1000000",
                            "\"kernel\": 3, \"padding\": [1000000, 1]"};
    const char *names[] = {"kernel", "kernel", "stride", "padding"};
    for (int i = 0; i < 4; i++) {
        char lj[256];
        snprintf(lj, sizeof lj,
                 "{\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 8, %s}", fields[i]);
        char *j = one_layer_net(3, 8, 8, lj);
        lw_error err = {0};
        network *n = net_str(j, &err);
        ASSERT_REFUSED(n, err, names[i], "4096");
        free(j);
    }
}

Test(limits_net, a_tensor_beyond_2_to_the_34_elements_is_refused)
{
    char *j = one_layer_net(16777216, 16777216, 1, "{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"]}");
    lw_error err = {0};
    network *n = net_str(j, &err);
    ASSERT_REFUSED(n, err, "beyond the supported size");
    free(j);
    /* a flatten of a legal tensor can be too long a vector */
    j = one_layer_net(4096, 4096, 2, "{\"name\": \"f\", \"type\": \"flatten\", \"inputs\": [\"data\"]}");
    n = net_str(j, &err);
    ASSERT_REFUSED(n, err, "16777216");
    free(j);
}

Test(limits_net, a_hundred_thousand_layers_are_refused_quickly)
{
    char *j = many_layers_net(100000, 0);
    lw_error err = {0};
    double t0 = now_s();
    network *n = net_str(j, &err);
    double dt = now_s() - t0;
    ASSERT_REFUSED(n, err, "100000 layers", "20000");
    cr_assert_lt(dt, QUICK_S, "took %.1f s", dt);
    free(j);
}

Test(limits_net, twenty_thousand_layers_load_in_bounded_time, .timeout = 120)
{
    for (int wide = 0; wide < 2; wide++) {
        char *j = many_layers_net(NET_MAX_LAYERS, wide);
        lw_error err = {0};
        double t0 = now_s();
        network *n = net_str(j, &err);
        double dt = now_s() - t0;
        cr_assert_not_null(n, "%s", err.msg);
        cr_assert_eq(n->n_layers, NET_MAX_LAYERS + 1);
        cr_assert_lt(dt, QUICK_S, "%s: %.1f s", wide ? "wide" : "chain", dt);
        net_free(n);
        free(j);
        j = many_layers_net(NET_MAX_LAYERS + 1, wide);
        n = net_str(j, &err);
        ASSERT_REFUSED(n, err, "20001 layers", "20000");
        free(j);
    }
}

Test(limits_net, nesting_a_hundred_thousand_deep_is_malformed_not_a_stack_overflow)
{
    size_t depth = 100000;
    char *j = malloc(2 * depth + 1);
    memset(j, '[', depth);
    memset(j + depth, ']', depth);
    j[2 * depth] = 0;
    lw_error err = {0};
    network *n = net_str(j, &err);
    ASSERT_REFUSED(n, err, "malformed JSON");
    cluster *c = cluster_str(j, &err);
    ASSERT_REFUSED(c, err, "malformed JSON");
    profile *p = profile_from_json(j, strlen(j), "limits.json", &err);
    ASSERT_REFUSED(p, err, "malformed JSON");
    free(j);
}

/* Found by reasoning about the fuzzers' reach: out_channels, input channels
 * and kernel each within their limits multiplied past a long in the
 * parameter count (signed overflow, UBSan). */
Test(limits_net, conv_parameters_beyond_a_long_are_refused)
{
    lw_error err = {0};
    network *n = net_load_file(REG "net_conv_params_overflow.json", &err);
    ASSERT_REFUSED(n, err, "conv", "4e10");
    cr_assert_eq(err.code, 2);
}

/* -------------------------------------------------------------- clusters */

Test(limits_cluster, a_hundred_thousand_gpus_are_refused_with_the_limit)
{
    lw_error err = {0};
    struct { long nodes, gpn; const char *says; } cases[] = {
        {1000, 100, "4096"}, {100000, 1, "4096"}, {1, 100000, "1024"}, {4096, 2, "4096"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *j = cluster_json(cases[i].nodes, cases[i].gpn, NULL);
        cluster *c = cluster_str(j, &err);
        ASSERT_REFUSED(c, err, cases[i].says);
        cr_assert_eq(err.code, 2);
        free(j);
    }
}

Test(limits_cluster, a_hundred_thousand_link_overrides_are_refused)
{
    lw_buf b = {0};
    lw_buf_printf(&b, ", \"links\": [");
    for (int i = 0; i < 100000; i++)
        lw_buf_printf(&b, "%s{\"gpus\": [0, 1], \"bandwidth_gbs\": 30}", i ? ", " : "");
    lw_buf_printf(&b, "]");
    char *j = cluster_json(2, 2, b.s);
    lw_error err = {0};
    cluster *c = cluster_str(j, &err);
    ASSERT_REFUSED(c, err, "links", "65536");
    free(j);
    lw_buf_free(&b);
}

/* The loader takes 4096 GPUs; the cost model refuses more than it can
 * build in minutes, at once. */
Test(limits_cluster, all_4096_gpus_are_refused_by_the_cost_model_quickly)
{
    char *j = cluster_json(4096, 1, NULL);
    lw_error err = {0};
    cluster *c = cluster_str(j, &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(cluster_gpus(c), 4096);
    network *n = plan_load_network("vgg16", &err);
    cr_assert_not_null(n, "%s", err.msg);
    double t0 = now_s();
    plan_settings s = {0, 0, 0, 0}; /* all GPUs */
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = s}, &err);
    ASSERT_REFUSED(p, err, "4096 GPUs", "at most 1024");
    cr_assert_eq(err.code, 2);
    cr_assert_lt(now_s() - t0, QUICK_S);
    free(j);
}

Test(limits_cluster, a_network_too_big_for_the_transfer_tables_is_refused, .timeout = 120)
{
    char *cj = cluster_json(8, 8, NULL);
    char *nj = many_layers_net(NET_MAX_LAYERS, 0);
    lw_error err = {0};
    cluster *c = cluster_str(cj, &err);
    network *n = net_str(nj, &err);
    cr_assert(c && n, "%s", err.msg);
    double t0 = now_s();
    plan_settings s = {64, 0, 0, 0};
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = s}, &err); /* 20000 edges x 210 x 210 configs */
    ASSERT_REFUSED(p, err, "transfer tables", "67108864");
    cr_assert_lt(now_s() - t0, QUICK_S);
    free(cj);
    free(nj);
}

/* A strategy file for a network at the layer limit reads in bounded time:
 * finding each entry's line for messages used to scan the text once per
 * entry (20000 layers: minutes). */
/* A strategy file of 20000 layers reads back to the configs written (every
 * layer's own, not all zeros: two GPUs give each layer several). How fast is
 * a bench figure (make bench), not a test: a timed test flakes under load. */
Test(limits_net, a_strategy_of_twenty_thousand_layers_reads_back, .timeout = 120)
{
    char *j = many_layers_net(NET_MAX_LAYERS, 0);
    lw_error err = {0};
    network *n = net_str(j, &err);
    cluster *c = plan_load_cluster("p100-4x4", &err);
    cr_assert(n && c, "%s", err.msg);
    cost_model *m = cost_model_open(n, c, NULL, 2, 32, &err);
    cr_assert_not_null(m, "%s", err.msg);
    int *ci = calloc((size_t)m->n_layers, sizeof(int)), *back = calloc((size_t)m->n_layers, sizeof(int));
    int varied = 0;
    for (int i = 0; i < m->n_layers; i++) {
        ci[i] = (i * 7 + 3) % m->n_configs[i];
        varied += ci[i] != 0;
    }
    cr_assert_gt(varied, NET_MAX_LAYERS / 2, "the strategy must not be the zero one");
    strategy_eval ev;
    strategy_evaluate(m, ci, &ev);
    char *doc = strategy_to_json(m, ci, &ev, "file", -1, NULL);
    int rc = strategy_from_json(m, doc, strlen(doc), "big.json", back, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    for (int i = 0; i < m->n_layers; i++)
        cr_assert_eq(back[i], ci[i], "layer %s: read config %d, wrote %d", n->layers[i].name, back[i], ci[i]);
    free(doc);
    strategy_eval_free(&ev);
    free(ci);
    free(back);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
    free(j);
}

/* ----------------------------------------------------------------- batch */

Test(limits_batch, a_batch_of_a_trillion_is_refused_with_the_limit)
{
    lw_error err = {0};
    network *n = plan_load_network("lenet5", &err);
    cluster *c = plan_load_cluster("p100-4x4", &err);
    cr_assert(n && c, "%s", err.msg);
    cost_model *m = cost_model_build(n, c, NULL, 4, 1000000000000L, &err);
    ASSERT_REFUSED(m, err, "1000000000000", "100000000");
    plan_settings s = {4, 0, 1000000000000L, 0};
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = s}, &err);
    ASSERT_REFUSED(p, err, "100000000");
    cr_assert_eq(err.code, 2);
}

/* ---------------------------------------------------------------- search */

/* A dense block of 12 layers at 16 GPUs: 24 nodes left, 1.5e44
 * combinations; refused, with the size and the limit, not tried. */
Test(limits_search, a_dense_block_at_16_gpus_is_too_large_and_says_how_large)
{
    char *j = dense_net(12);
    lw_error err = {0};
    network *n = net_str(j, &err);
    cluster *c = plan_load_cluster("p100-4x4", &err);
    cr_assert(n && c, "%s", err.msg);
    double t0 = now_s();
    plan_settings s = {16, 0, 0, 0};
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = s}, &err);
    ASSERT_REFUSED(p, err, "too large", "layers left after the eliminations", "combinations", "16777216");
    cr_assert_eq(err.code, 1);
    cr_assert_lt(now_s() - t0, QUICK_S);
    free(j);
}

/* The same through the engine's own interface: SEARCH_TOO_LARGE, with the
 * size of what was left. */
Test(limits_search, search_run_with_reports_too_large_and_the_size)
{
    char *j = dense_net(6);
    lw_error err = {0};
    network *n = net_str(j, &err);
    cluster *c = plan_load_cluster("p100-4x4", &err);
    cr_assert(n && c, "%s", err.msg);
    cost_model *m = cost_model_build(n, c, NULL, 16, 512, &err);
    cr_assert_not_null(m, "%s", err.msg);
    cost_graph *g = cost_model_graph(m);
    search_info info;
    search_result *r = search_run_with(g, NULL, NULL, NULL, &info);
    cr_assert_null(r);
    cr_assert_eq(info.status, SEARCH_TOO_LARGE);
    cr_assert_geq(info.n_left, 12, "%d nodes left", info.n_left);
    cr_assert_gt(info.final_space, 1e20);
    cr_assert_gt(info.ve_entries, SEARCH_DEFAULT_TABLE_LIMIT);
    cg_free(g);
    cost_model_free(m);
    net_free(n);
    cluster_free(c);
    free(j);
}

/* 1500 layers all reading the input: the paper's Algorithm 1 (no folds)
 * eliminates nothing, 1501 nodes for the final step, whose planning is
 * cubic in that: refused at once. With folds (the default) every branch
 * folds into the input and two layers are left. */
Test(limits_search, fifteen_hundred_dangling_branches_are_refused_quickly_without_folds)
{
    char *j = many_layers_net(1500, 1);
    lw_error err = {0};
    network *n = net_str(j, &err);
    cluster *c = plan_load_cluster("p100-4x4", &err);
    cr_assert(n && c, "%s", err.msg);
    double t0 = now_s();
    plan_settings s = {4, 0, 0, 1};
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = s}, &err);
    ASSERT_REFUSED(p, err, "too large", "1501 layers", "at most 1000");
    cr_assert_lt(now_s() - t0, QUICK_S);

    n = net_str(j, &err);
    c = plan_load_cluster("p100-4x4", &err);
    cr_assert(n && c, "%s", err.msg);
    t0 = now_s();
    s.no_fold = 0;
    p = plan_open(n, c, NULL, &(plan_options){.set = s}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_lt(now_s() - t0, QUICK_S);
    cr_assert_eq(p->sr->n_left, 2);
    int folds = 0;
    for (int k = 0; k < p->sr->n_steps; k++) folds += p->sr->steps[k].kind == ELIM_FOLD;
    cr_assert_eq(folds, 1499);
    cr_assert_eq(p->sr->cost, cg_evaluate(p->cg, p->sr->config));
    plan_free(p);
    free(j);
}

/* ------------------------------------------------------------------- CLI */

static char *write_tmp(const char *dir, const char *name, const char *text)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    write_file(path, text);
    return path;
}

Test(limits_cli, search_of_a_dense_block_says_too_large_and_exits_1, .timeout = 120)
{
    char *d = tmpdir();
    char *j = dense_net(12);
    char *net = write_tmp(d, "dense12.json", j);
    run_result r = run_lw((const char *[]){"search", "-n", net, "-c", "p100-4x4", "-g", "16", NULL}, 0, 60);
    cr_assert_eq(r.status, 1, "exit %d; stderr: %s", r.status, r.err);
    cr_assert(strstr(r.err, "too large") && strstr(r.err, "combinations"), "stderr: %s", r.err);
    cr_assert_eq(r.out[0], 0, "nothing on stdout, got: %.200s", r.out);
    run_free(&r);
    rm_rf(d);
    free(d);
    free(j);
    free(net);
}

Test(limits_cli, absurd_options_are_refused_with_their_limits)
{
    struct { const char *args[8]; const char *says; } cases[] = {
        {{"search", "-n", "lenet5", "--batch", "1000000000000", NULL}, "100000000"},
        {{"search", "-n", "lenet5", "--batch-per-gpu", "1000000000", NULL}, "1000000"},
        {{"search", "-n", "lenet5", "-g", "100000", NULL}, "GPU count"},
        {{"scale", "-n", "lenet5", "--gpus", "1,2,100000", NULL}, "--gpus"},
        {{"export", "-n", "lenet5", "--step", "100000000", "-o", "/tmp/x.dot", NULL}, "--step"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_lw(cases[i].args, 0, 60);
        cr_assert_eq(r.status, 2, "%s %s %s: exit %d; stderr: %s", cases[i].args[2], cases[i].args[3],
                     cases[i].args[4], r.status, r.err);
        cr_assert(strstr(r.err, cases[i].says), "stderr should mention \"%s\": %s", cases[i].says, r.err);
        run_free(&r);
    }
}

/* A final step with real work (a dense block of 3 at 8 GPUs: variable
 * elimination over 1.6e9 combinations) shows its percentage on a terminal,
 * clears the line at the end, and says nothing of it into a pipe. */
Test(limits_cli, a_long_final_step_shows_progress_on_a_terminal_only, .timeout = 120)
{
    char *d = tmpdir();
    char *j = dense_net(3);
    char *net = write_tmp(d, "dense3.json", j);
    const char *args[] = {"search", "-n", net, "-c", "p100-4x4", "-g", "8", NULL};
    run_result r = run_lw(args, 1, 90);
    cr_assert_eq(r.status, 0, "exit %d; stderr: %s", r.status, r.err);
    cr_assert(strstr(r.err, "final step of the search:"), "no progress on the terminal: \"%s\"", r.err);
    cr_assert(strstr(r.err, "%"), "no percentage: \"%s\"", r.err);
    cr_assert(strstr(r.err, "\r\033[K"), "progress line not cleared at the end: \"%s\"", r.err);
    cr_assert(strstr(r.out, "variable-elimination"), "stdout: %s", r.out);
    run_free(&r);
    r = run_lw(args, 0, 90);
    cr_assert_eq(r.status, 0);
    cr_assert_null(strstr(r.err, "final step"), "progress into a pipe: \"%s\"", r.err);
    run_free(&r);
    rm_rf(d);
    free(d);
    free(j);
    free(net);
}

/* simulate is bounded as search is (issue 31, finding 13): Inception-v3
 * model-parallel on 1024 GPUs (about 10^7 tasks) ran past 300 s at 5.2 GB.
 * Refused up front where even the fastest rate passes the limit; stopped
 * within about a second where the rate seen does; its progress on a
 * terminal only. */
#define BIG_CLUSTER "tests/fixtures/clusters/h100-128x8.json"

Test(limits_cli, simulate_too_large_is_refused_up_front, .timeout = 120)
{
    setenv("LAYERWISE_MAX_SIM_S", "10", 1);
    const char *args[] = {"simulate", "-n", "inception_v3", "-c", BIG_CLUSTER, "-g", "1024", "-s", "model", NULL};
    run_result r = run_lw(args, 0, 60);
    cr_assert_eq(r.status, 1, "exit %d; stderr: %s", r.status, r.err);
    cr_assert(strstr(r.err, "too large for this machine") && strstr(r.err, "1024 GPUs") && strstr(r.err, "tasks") &&
              strstr(r.err, "MB") && strstr(r.err, "the limit is 10 s"), "stderr: %s", r.err);
    cr_assert(r.seconds < 10, "refused up front, not after %.1f s", r.seconds);
    cr_assert_eq(r.out[0], 0, "stdout: %.200s", r.out);
    run_free(&r);
    unsetenv("LAYERWISE_MAX_SIM_S");
}

Test(limits_cli, simulate_past_the_limit_at_the_rate_seen_stops, .timeout = 120)
{
    /* 7.5e5 tasks: at least 1.5 s, 34 s on the development machine */
    setenv("LAYERWISE_MAX_SIM_S", "3", 1);
    const char *args[] = {"simulate", "-n", "inception_v3", "-c", BIG_CLUSTER, "-g", "64", "-s", "model", NULL};
    run_result r = run_lw(args, 1, 60);
    cr_assert_eq(r.status, 1, "exit %d; stderr: %s", r.status, r.err);
    cr_assert(strstr(r.err, "too large for this machine") && strstr(r.err, "at the rate so far") &&
              strstr(r.err, "the limit is 3 s"), "stderr: %s", r.err);
    cr_assert(strstr(r.err, "simulating the step"), "progress on the terminal: %s", r.err);
    cr_assert(r.seconds < 8, "stopped after %.1f s", r.seconds);
    cr_assert_eq(r.out[0], 0, "stdout: %.200s", r.out);
    run_free(&r);
    unsetenv("LAYERWISE_MAX_SIM_S");
}

Test(limits_cli, simulate_shows_progress_on_a_terminal_only, .timeout = 120)
{
    const char *args[] = {"simulate", "-n", "inception_v3", "-c", "p100-4x4", "-g", "16", "-s", "model", NULL};
    run_result r = run_lw(args, 1, 90);
    cr_assert_eq(r.status, 0, "exit %d; stderr: %s", r.status, r.err);
    /* Inception-v3 model-parallel on 16 GPUs: about 6e+04 tasks since the
     * network has its BatchNorm and ReLU layers (5.22e+04 before) */
    cr_assert(strstr(r.err, "simulating the step (about 6e+04 tasks):"), "no progress on the terminal: \"%s\"",
              r.err);
    cr_assert(strstr(r.err, "%"), "no percentage: \"%s\"", r.err);
    cr_assert(strstr(r.err, "\r\033[K"), "progress line not cleared at the end: \"%s\"", r.err);
    cr_assert(strstr(r.out, "simulated step"), "stdout: %s", r.out);
    run_free(&r);
    r = run_lw(args, 0, 90);
    cr_assert_eq(r.status, 0);
    cr_assert_str_empty(r.err, "progress into a pipe: \"%s\"", r.err);
    run_free(&r);
}

/* ------------------------------------------------------ no partial output */

static void assert_no_temporaries(const char *dir)
{
    char *l = dir_listing(dir);
    cr_assert_null(strstr(l, ".tmp."), "a temporary was left in %s: %s", dir, l);
    free(l);
}

Test(limits_output, a_failing_search_o_leaves_nothing, .timeout = 120)
{
    char *d = tmpdir();
    char path[PATH_MAX];
    /* under a directory that does not exist */
    snprintf(path, sizeof path, "%s/no/such/dir/out.json", d);
    run_result r = run_lw((const char *[]){"search", "-n", "lenet5", "-c", "p100-4x4", "-g", "4", "-o", path, NULL}, 0, 60);
    /* refused before any work, like export's paths (issue 15): exit 2 */
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "does not exist") && strstr(r.err, path), "stderr: %s", r.err);
    run_free(&r);
    char *l = dir_listing(d);
    cr_assert_str_empty(l, "created: %s", l);
    free(l);
    /* onto a directory */
    snprintf(path, sizeof path, "%s/out.json", d);
    cr_assert_eq(mkdir(path, 0755), 0);
    r = run_lw((const char *[]){"search", "-n", "lenet5", "-c", "p100-4x4", "-g", "4", "-o", path, NULL}, 0, 60);
    /* a directory is never replaced: exit 2 (issue 15) */
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "directory") && strstr(r.err, path), "stderr: %s", r.err);
    run_free(&r);
    l = dir_listing(d);
    cr_assert_str_eq(l, "out.json", "left: %s", l);
    free(l);
    l = dir_listing(path);
    cr_assert_str_empty(l, "wrote into the directory: %s", l);
    free(l);
    /* bad input: an existing output keeps its old content */
    snprintf(path, sizeof path, "%s/keep.json", d);
    write_file(path, "old\n");
    r = run_lw((const char *[]){"search", "-n", REG "net_conv_params_overflow.json", "-o", path, NULL}, 0, 60);
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    run_free(&r);
    FILE *f = fopen(path, "r");
    char buf[16] = "";
    cr_assert(f && fgets(buf, sizeof buf, f));
    fclose(f);
    cr_assert_str_eq(buf, "old\n");
    assert_no_temporaries(d);
    rm_rf(d);
    free(d);
}

Test(limits_output, a_failing_export_o_leaves_nothing, .timeout = 120)
{
    char *d = tmpdir();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/no/such/dir/out.svg", d);
    run_result r = run_lw((const char *[]){"export", "-n", "lenet5", "-c", "p100-4x4", "-g", "4", "-o", path, NULL}, 0, 60);
    cr_assert_neq(r.status, 0, "exit %d: %s", r.status, r.err);
    run_free(&r);
    char *l = dir_listing(d);
    cr_assert_str_empty(l, "created: %s", l);
    free(l);
    snprintf(path, sizeof path, "%s/out.svg", d);
    cr_assert_eq(mkdir(path, 0755), 0);
    r = run_lw((const char *[]){"export", "-n", "lenet5", "-c", "p100-4x4", "-g", "4", "-o", path, NULL}, 0, 60);
    cr_assert_neq(r.status, 0, "exit %d: %s", r.status, r.err);
    run_free(&r);
    l = dir_listing(d);
    cr_assert_str_eq(l, "out.svg", "left: %s", l);
    free(l);
    rm_rf(d);
    free(d);
}

/* Not as root: root writes through a read-only mode. */
Test(limits_output, a_read_only_directory_leaves_nothing)
{
    if (geteuid() == 0) cr_skip_test("running as root: a read-only mode does not stop root");
    char *d = tmpdir();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/out.json", d);
    cr_assert_eq(chmod(d, 0555), 0);
    run_result r = run_lw((const char *[]){"search", "-n", "lenet5", "-g", "4", "-o", path, NULL}, 0, 60);
    chmod(d, 0755);
    cr_assert_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "ermission denied"), "stderr: %s", r.err);
    run_free(&r);
    char *l = dir_listing(d);
    cr_assert_str_empty(l, "left: %s", l);
    free(l);
    rm_rf(d);
    free(d);
}

/* Starts `export` of a diagram that takes a while to render, waits until
 * its temporary appears, and sends sig. Returns 1 if it caught it there
 * (0: finished first) and leaves the directory for the caller to check. */
static int signal_during_export(const char *dir, const char *out, int sig)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 1);
        dup2(nul, 2);
        /* a shell that started `make test` in the background ignores SIGINT,
         * and the binary rightly keeps an ignored signal ignored (nohup):
         * the child starts from the defaults so the signal is delivered */
        signal(sig, SIG_DFL);
        execl(lw_binary(), lw_binary(), "export", "-n", "inception_v3", "-c", "p100-4x4", "-g", "16", "--view",
              "graph", "-o", out, (char *)NULL);
        _exit(127);
    }
    double t0 = now_s();
    int caught = 0, st;
    while (now_s() - t0 < 120) {
        if (waitpid(pid, &st, WNOHANG) == pid) return 0;
        char *l = dir_listing(dir);
        int tmp = strstr(l, ".tmp.") != NULL;
        free(l);
        if (tmp) {
            kill(pid, sig);
            caught = 1;
            break;
        }
        usleep(1000);
    }
    if (!caught) kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    cr_assert(caught, "export still running after 120 s");
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == sig, "export was not ended by signal %d (status %#x)", sig, st);
    return 1;
}

/* SIGTERM (timeout) or SIGINT (Ctrl-C) while the diagram is rendered into
 * its temporary: the temporary is removed, nothing else is written. */
Test(limits_output, a_signal_during_export_removes_the_temporary, .timeout = 600)
{
    int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; i++) {
        char *d = tmpdir();
        char out[PATH_MAX];
        snprintf(out, sizeof out, "%s/inception.png", d);
        int caught = signal_during_export(d, out, sigs[i]);
        char *l = dir_listing(d);
        if (caught) cr_assert_str_empty(l, "signal %d left: %s", sigs[i], l);
        else cr_assert_str_eq(l, "inception.png", "finished, but left: %s", l);
        free(l);
        rm_rf(d);
        free(d);
    }
}

/* SIGKILL cannot be handled: a temporary may stay, but the target is never
 * a partial file — absent, or a whole PNG. */
Test(limits_output, sigkill_never_leaves_a_partial_target, .timeout = 600)
{
    char *d = tmpdir();
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/inception.png", d);
    signal_during_export(d, out, SIGKILL);
    struct stat st;
    if (stat(out, &st) == 0) {
        FILE *f = fopen(out, "rb");
        unsigned char head[8], tail[8];
        cr_assert(f && fread(head, 1, 8, f) == 8);
        cr_assert(memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0, "not a PNG");
        fseek(f, -8, SEEK_END);
        cr_assert(fread(tail, 1, 8, f) == 8);
        cr_assert(memcmp(tail, "IEND", 4) == 0, "a partial PNG");
        fclose(f);
    }
    rm_rf(d);
    free(d);
}
