#include "cli.h"
#include "cli_options.h"
#include "cost_sharding.h"
#include "settings.h"

#include "diff.h"
#include "explain.h"
#include "fit.h"
#include "export_dot.h"
#include "info.h"
#include "net_json.h"
#include "netgen.h"
#include "pipeline.h"
#include "refine.h"
#include "sim.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Summaries (compare, scale, search) simulate a strategy beside Eq. 1
 * unless its step has more tasks than this (a model-parallel step on 64
 * GPUs has most of a million pieces: `simulate` still runs it). */

typedef struct opts {
    const char *cmd;
    const char *net, *cluster, *profile, *strategy, *out, *view, *gpus_list, *whynot, *explain, *trace;
    int overlap; /* simulate: sim_overlap, -1 for the default (ddp) */
    int refine;            /* search --refine */
    double refine_s;       /* its time limit */
    struct {                 /* search --refine --seed N */
        unsigned long long value;
        int set;
    } seed;
    plan_settings set;
    plan_memory_settings mset;
    struct {                 /* what-ifs over the cluster's settings; -1 (bandwidths 0): the cluster's own */
        int sync, precision;
        double bucket_mb, intra_bw, inter_bw;
        const char *stack; /* --stack NAME or FILE; NULL: the cluster's */
    } over;
    int json, steps, step;
    int n_pins;
    const char *pins[64];
    struct {                 /* diff: the two strategies named */
        int n;
        const char *name[2];
    } diff;
    int out_stdout, trace_stdout; /* -o - / --trace -: out / trace is /dev/stdout, no "wrote" notice */
    struct {                 /* the operand of import (the ONNX file) or of net (the family), net's sizes, allreduce's --size */
        const char *operand;
        netgen_params sizes; /* 0: not given */
        double size;
    } arg;
    megatron_options mega;   /* -s megatron and compare/scale's megatron row: --tp (0: the default), --sp */
    onnx_options onnx;       /* --input-shape */
    struct {                 /* pipelines: --pp (0: not given), --microbatches (0: the best), --schedule (-1), --vp (0) */
        int pp, microbatches, schedule, vp;
    } pipe;
} opts;

/* Messages quote names and paths from files and the command line: control
 * characters in them are shown as \xNN, never sent to the terminal. */
static int die(const lw_error *e)
{
    lw_say("layerwise: %s\n", e->msg);
    return e->code ? e->code : 1;
}

static int bad(const char *fmt, const char *a)
{
    lw_error e;
    lw_fail(&e, 2, fmt, a);
    die(&e);
    fprintf(stderr, "(see layerwise --help)\n");
    return 2;
}

/* "OPTION "V" must be a whole number from 1 to MAX", exit status 2. */
static int bad_range(const char *option, const char *v, long max)
{
    lw_say("layerwise: %s \"%s\" must be a whole number from 1 to %ld\n(see layerwise --help)\n", option,
            v ? v : "", max);
    return 2;
}

#define parse_long lw_parse_long
#define parse_double lw_parse_double

/* The exit status once stdout is flushed: a write error there (a full
 * disk, a closed pipe) is a failure, named. */
static int stdout_status(int rc)
{
    lw_error e = {0};
    if (lw_finish_stdout(&e) != 0) {
        fprintf(stderr, "layerwise: %s\n", e.msg);
        if (rc == 0) rc = 1;
    }
    return rc;
}

/* The memory settings' options (parse_value_option's): 0, or 2 with the
 * message printed. */
static int parse_memory_option(opts *o, const char *a, const char *v)
{
    if (strcmp(a, "--memory-limit") == 0) {
        double b = settings_parse_size(v);
        if (b <= 0)
            return bad("--memory-limit \"%s\" must be a size such as 16GiB, 12GB, 8000MiB or 16 (GiB)", v ? v : "");
        o->mset.limit = b;
    } else if (strcmp(a, "--optimizer") == 0) {
        int k = optimizer_from_name(v);
        if (k < 0) return bad("--optimizer \"%s\" must be sgd, momentum or adam", v ? v : "");
        o->mset.optimizer = (optimizer_kind)k;
    } else {
        double d;
        if (parse_double(v, 1e-3, 1e6, &d) != 0) return bad("--time-limit \"%s\" must be seconds from 0.001 to 1e6", v ? v : "");
        o->mset.time_s = d;
    }
    return 0;
}

/* --recompute and --attention: settings every cost model set up after
 * takes (cost.h's cost_recompute, cost_attention). 0, or 2 with the
 * message printed. */
static int parse_kernel_option(const char *a, const char *v)
{
    if (strcmp(a, "--recompute") == 0) {
        int k = recompute_from_name(v);
        if (k < 0) return bad("--recompute \"%s\" must be none, selective or full", v ? v : "");
        cost_recompute = (recompute_kind)k;
        return 0;
    }
    int k = attention_from_name(v);
    if (k < 0) return bad("--attention \"%s\" must be flash or standard", v ? v : "");
    cost_attention = (attention_kind)k;
    return 0;
}

/* net's size options (--layers N ...): 0 taken, 1 not one of them, else 2
 * with the message printed. */
static int parse_size_option(opts *o, const char *a, const char *v)
{
    long n;
    for (int k = 0; k < netgen_n_options; k++) {
        if (strcmp(a, netgen_options[k].name) != 0) continue;
        if (parse_long(v, 1, netgen_options[k].max, &n) != 0) return bad_range(a, v, netgen_options[k].max);
        *(long *)((char *)&o->arg.sizes + netgen_options[k].offset) = n;
        return 0;
    }
    return 1;
}

/* Options that take a value v (NULL when a is the last argument) and
 * check it: 0 taken (*takes_value 0 when v is not its value: --refine's
 * seconds are optional), 1 not one of them, else 2 with the message
 * printed. */
/* The options of tensor and pipeline parallelism, as parse_value_option. */
static int parse_parallel_option(opts *o, const char *a, const char *v)
{
    long n;
    if (strcmp(a, "--tp") == 0) {
        if (parse_long(v, 1, COST_MAX_GPUS, &n) != 0) return bad_range("--tp", v, COST_MAX_GPUS);
        o->mega.tp = (int)n;
    } else if (strcmp(a, "--pp") == 0 || strcmp(a, "--microbatches") == 0 || strcmp(a, "--vp") == 0) {
        if (parse_long(v, 1, 1 << 20, &n) != 0) return bad_range(a, v, 1 << 20);
        *(a[2] == 'p' ? &o->pipe.pp : a[2] == 'm' ? &o->pipe.microbatches : &o->pipe.vp) = (int)n;
    } else if (strcmp(a, "--schedule") == 0) {
        if (!v || (o->pipe.schedule = pipe_schedule_from_name(v)) < 0)
            return bad("--schedule \"%s\" must be gpipe, 1f1b or interleaved", v ? v : "");
    } else {
        return 1;
    }
    return 0;
}

static int parse_value_option(opts *o, const char *a, const char *v, int *takes_value)
{
#define TAKES(...) (strcmp(a, __VA_ARGS__) == 0)
    long n;
    int par = parse_parallel_option(o, a, v);
    if (par != 1) return par;
    if (TAKES("--input-shape")) {
        lw_error e = {0};
        if (onnx_check_input_shape(v, &e) != 0) return bad("%s", e.msg);
        if (o->onnx.n_shapes == ONNX_MAX_INPUT_SHAPES) return bad("%s", "too many --input-shape options (8 at most)");
        o->onnx.shapes[o->onnx.n_shapes++] = v;
    } else if (TAKES("-g") || TAKES("--gpus")) {
        if (!v) return bad("%s needs a value", a);
        if (strchr(v, ',') || (o->cmd && strcmp(o->cmd, "scale") == 0)) {
            o->gpus_list = v;
        } else {
            if (parse_long(v, 1, CLUSTER_MAX_GPUS, &n) != 0)
                return bad("GPU count \"%s\" must be a whole number from 1 to the cluster's GPUs", v);
            o->set.gpus = (int)n;
        }
    } else if (TAKES("--batch")) {
        if (parse_long(v, 1, COST_MAX_BATCH, &n) != 0) return bad_range("--batch", v, COST_MAX_BATCH);
        o->set.global_batch = n;
    } else if (TAKES("--batch-per-gpu")) {
        if (parse_long(v, 1, PLAN_MAX_BATCH_PER_GPU, &n) != 0)
            return bad_range("--batch-per-gpu", v, PLAN_MAX_BATCH_PER_GPU);
        o->set.batch_per_gpu = n;
    } else if (TAKES("--sync")) {
        int s = v ? sync_scheme_from_name(v) : -1;
        if (s < 0) return bad("--sync \"%s\" must be ps, ring, zero1, zero2, zero3, fsdp or hsdp", v ? v : "");
        o->over.sync = s;
    } else if (TAKES("--precision")) {
        int pr = v ? precision_from_name(v) : -1;
        if (pr < 0) return bad("--precision \"%s\" must be fp32, tf32, fp16 or bf16", v ? v : "");
        o->over.precision = pr;
    } else if (TAKES("--stack")) {
        if (!v || !v[0]) return bad("--stack needs a stack name or file (shipped: see data/stacks/)%s", "");
        o->over.stack = v;
    } else if (TAKES("--size")) {
        double d;
        if (parse_double(v, 1, 1e13, &d) != 0) return bad("--size \"%s\" must be a number of bytes from 1 to 1e13", v ? v : "");
        o->arg.size = d;
    } else if (TAKES("--bucket-mb")) {
        double d;
        if (parse_double(v, 0, 1e6, &d) != 0) return bad("--bucket-mb \"%s\" must be a number of MiB from 0 to 1e6", v ? v : "");
        o->over.bucket_mb = d;
    } else if (TAKES("--intra-bw") || TAKES("--inter-bw")) {
        double d;
        if (parse_double(v, 1e-3, 1e6, &d) != 0) return bad("bandwidth \"%s\" must be a number of GB/s from 0.001 to 1e6", v ? v : "");
        if (a[3] == 'n' && a[4] == 't' && a[5] == 'r') o->over.intra_bw = d;
        else o->over.inter_bw = d;
    } else if (TAKES("--step")) {
        if (parse_long(v, 0, 1000000, &n) != 0) return bad("--step \"%s\" must be a whole number of steps (0 or more)", v ? v : "");
        o->step = (int)n;
    } else if (TAKES("--overlap")) {
        o->overlap = sim_overlap_from_name(v);
        if (o->overlap < 0) return bad("--overlap \"%s\" must be none, ddp or full", v ? v : "");
    } else if (TAKES("--refine")) {
        /* an optional number of seconds: a number out of range is an
         * error, not the next argument */
        double d;
        char *end = NULL;
        o->refine = 1;
        o->refine_s = 10;
        if (v && *v) (void)strtod(v, &end);
        if (end && end != v && !*end) {
            if (parse_double(v, 0.001, 86400, &d) != 0)
                return bad("--refine \"%s\" must be a number of seconds from 0.001 to 86400", v);
            o->refine_s = d;
        } else {
            *takes_value = 0;
        }
    } else if (TAKES("--seed")) {
        if (parse_long(v, 0, 2147483647L, &n) != 0) return bad("--seed \"%s\" must be a whole number", v ? v : "");
        o->seed.value = (unsigned long long)n;
        o->seed.set = 1;
    } else if (TAKES("--trace")) {
        o->trace = v;
    } else if (TAKES("--memory-limit") || TAKES("--optimizer") || TAKES("--time-limit")) {
        return parse_memory_option(o, a, v);
    } else if (TAKES("--why-not")) {
        o->whynot = v;
    } else if (TAKES("--explain")) {
        o->explain = v;
    } else if (TAKES("--pin")) {
        if (!v || !strchr(v, '=')) return bad("--pin needs LAYER=CONFIG, e.g. --pin fc6=\"c4\"; got \"%s\"", v ? v : "");
        if (o->n_pins == 64) return bad("%s", "too many --pin options (64 at most)");
        o->pins[o->n_pins++] = v;
    } else {
        return 1;
    }
#undef TAKES
    return 0;
}

/* Whether the command line asks for Megatron's plan, which --tp and --sp
 * shape: -s megatron, diff's A or B, or compare and scale (a row). */
static int megatron_named(const opts *o)
{
    if (strcmp(o->cmd, "compare") == 0 || strcmp(o->cmd, "scale") == 0) return 1;
    if (o->strategy && strcmp(o->strategy, "megatron") == 0) return 1;
    for (int k = 0; k < o->diff.n; k++)
        if (strcmp(o->diff.name[k], "megatron") == 0) return 1;
    return 0;
}

/* Options that would be ignored where they are given, or that contradict
 * each other, are refused, never dropped without a word: 0, or 2 with the
 * message printed. */
static int check_option_use(const opts *o, int optimizer_given)
{
    const int tui = !o->cmd || strcmp(o->cmd, "tui") == 0; /* the TUI names what it does not take */
    if (o->set.global_batch > 0 && o->set.batch_per_gpu > 0)
        return bad("%s", "--batch (the global batch) and --batch-per-gpu (the batch per GPU) both set the batch: give one");
    if (o->seed.set && !o->refine && !tui)
        return bad("%s", "--seed is the seed of search --refine: it goes with --refine");
    if (o->strategy && !tui && strcmp(o->cmd, "eval") != 0 && strcmp(o->cmd, "simulate") != 0 &&
        strcmp(o->cmd, "export") != 0 && strcmp(o->cmd, "fit") != 0)
        return bad(strcmp(o->cmd, "search") == 0 ? "-s %s: search finds the strategy itself; eval, simulate, export "
                                                   "and fit take a given one"
                                                 : "-s %s: a given strategy is for eval, simulate, export and fit",
                   o->strategy);
    if (o->step >= 0 && !tui && strcmp(o->cmd, "export") != 0)
        return bad("--step is an option of export --view reduced, not of %s", o->cmd);
    /* a list of counts means something to scale only; elsewhere it would be
     * ignored and every GPU used */
    if (o->gpus_list && !(o->cmd && strcmp(o->cmd, "scale") == 0))
        return bad("GPU count \"%s\" must be one whole number here (a list is for scale --gpus)", o->gpus_list);
    if (o->refine && !(o->cmd && strcmp(o->cmd, "search") == 0)) return bad("%s", "--refine is an option of search");
    if (o->set.no_fold && !(o->cmd && (strcmp(o->cmd, "search") == 0 || strcmp(o->cmd, "export") == 0)))
        return bad("%s", "--no-fold is an option of search and export");
    if (o->whynot && !(o->cmd && strcmp(o->cmd, "search") == 0))
        return bad("--why-not %s is an option of search", o->whynot);
    if (o->explain && !(o->cmd && strcmp(o->cmd, "search") == 0))
        return bad("--explain %s is an option of search", o->explain);
    if (o->explain && (o->whynot || o->refine)) return bad("%s", "--explain goes alone: not with --why-not or --refine");
    if ((o->trace || o->overlap >= 0) && !(o->cmd && strcmp(o->cmd, "simulate") == 0))
        return bad("%s is an option of simulate", o->trace ? "--trace" : "--overlap");
    const int is_net = o->cmd && strcmp(o->cmd, "net") == 0;
    for (int k = 0; k < netgen_n_options && !is_net; k++)
        if (*(const long *)((const char *)&o->arg.sizes + netgen_options[k].offset))
            return bad("%s is an option of net (the transformer generators)", netgen_options[k].name);
    if (is_net && (o->net || o->cluster || o->json))
        return bad("%s is not an option of net: it reads no network or cluster and always writes JSON",
                   o->net ? "-n" : o->cluster ? "-c" : "--json");
    if ((o->mega.tp || o->mega.sp) && !tui && !megatron_named(o))
        return bad("%s shapes Megatron's plan: it goes with -s megatron (eval, simulate, export), diff's megatron, "
                   "or compare and scale (their megatron row)", o->mega.tp ? "--tp" : "--sp");
    const int mega_s = o->strategy && strcmp(o->strategy, "megatron") == 0;
    const int pipe_cmd = o->cmd && (strcmp(o->cmd, "search") == 0 || (strcmp(o->cmd, "eval") == 0 && mega_s) ||
                                    strcmp(o->cmd, "compare") == 0 || strcmp(o->cmd, "scale") == 0 ||
                                    (strcmp(o->cmd, "export") == 0 && (!o->strategy || mega_s)) ||
                                    (strcmp(o->cmd, "simulate") == 0 &&
                                     (!o->strategy || mega_s || strcmp(o->strategy, "optimum") == 0)));
    if ((o->pipe.pp || o->pipe.microbatches || o->pipe.vp || o->pipe.schedule >= 0) && !tui && !pipe_cmd)
        return bad("%s is a pipeline option: it goes with search, compare, scale, eval -s megatron, simulate [-s optimum|megatron] or export [-s megatron]",
                   o->pipe.pp ? "--pp" : o->pipe.microbatches ? "--microbatches" : o->pipe.vp ? "--vp" : "--schedule");
    if ((o->pipe.microbatches || o->pipe.vp || o->pipe.schedule >= 0) && !o->pipe.pp && !tui)
        return bad("%s shapes a pipeline: give the stages with --pp P",
                   o->pipe.microbatches ? "--microbatches" : o->pipe.vp ? "--vp" : "--schedule");
    if (o->pipe.pp && (o->refine || o->whynot || o->n_pins || o->steps || o->overlap >= 0))
        return bad("%s", "--pp goes without --refine, --why-not, --pin, --steps and --overlap (not yet for pipelines)");
    if (o->pipe.pp == 1 && o->explain)
        return bad("%s", "--explain with --pp 1: one stage has no boundaries; without --pp it explains the layer's config");
    /* --pin fixes a layer in a search: where none runs (a given strategy,
     * the cost tables, compare's and scale's rows) it would be ignored */
    const int given_s = o->strategy && strcmp(o->strategy, "optimum") != 0;
    if (o->n_pins && !tui &&
        !(strcmp(o->cmd, "search") == 0 || strcmp(o->cmd, "fit") == 0 || strcmp(o->cmd, "diff") == 0 ||
          strcmp(o->cmd, "export") == 0 || (strcmp(o->cmd, "simulate") == 0 && !given_s))) {
        char m[320];
        snprintf(m, sizeof m, "--pin %.60s: %.20s%s takes no pins (a pin fixes a layer in the search of search, fit, "
                              "diff, simulate's optimum, export and the TUI)", o->pins[0], o->cmd,
                 given_s ? " -s (every layer's config from the strategy)" : "");
        return bad("%s", m);
    }
    /* the memory limit and its time budget bound a search (and eval's fits): the
     * cost tables, a profile template and a given strategy's simulation or
     * diagram would ignore them */
    if ((o->mset.limit != 0 || o->mset.time_s > 0) && !tui &&
        (strcmp(o->cmd, "costs") == 0 || strcmp(o->cmd, "profile") == 0 ||
         ((strcmp(o->cmd, "simulate") == 0 || strcmp(o->cmd, "export") == 0) && given_s))) {
        char m[240];
        snprintf(m, sizeof m, "%s: %.20s%s does not look at memory (the limit bounds a search: search, fit, compare, "
                              "scale, eval's fits, simulate's and export's optimum)",
                 o->mset.time_s > 0 ? "--time-limit" : o->mset.limit < 0 ? "--no-memory-limit" : "--memory-limit",
                 o->cmd, given_s ? " -s" : "");
        return bad("%s", m);
    }
    /* the optimizer's state enters memory only: a profile template, a given
     * strategy's simulation and its diagram would not change with it
     * (given: a bit parse_args keeps, as opts has no field to spare) */
    if (optimizer_given && !tui &&
        (strcmp(o->cmd, "profile") == 0 ||
         ((strcmp(o->cmd, "simulate") == 0 || strcmp(o->cmd, "export") == 0) && given_s)))
        return bad("--optimizer: %s does not look at memory, which the optimizer's state is part of (it goes with "
                   "search, fit, compare, scale, eval, costs, simulate's and export's optimum)",
                   strcmp(o->cmd, "profile") == 0 ? "profile" : strcmp(o->cmd, "simulate") == 0 ? "simulate -s" : "export -s");
    /* --input-shape means something to an ONNX model only; elsewhere it would be ignored */
    if (o->onnx.n_shapes && o->cmd && strcmp(o->cmd, "import") != 0 && strcmp(o->cmd, "tui") != 0 &&
        !(o->net && onnx_is_path(o->net)))
        return bad("--input-shape %s is for ONNX models (-n FILE.onnx, or import)", o->onnx.shapes[0]);
    return 0;
}

static int listed(const char *const *names, const char *a)
{
    for (int k = 0; names[k]; k++)
        if (strcmp(names[k], a) == 0) return 1;
    return 0;
}

/* An option that command cmd would ignore, refused where it is given: net,
 * info, import and list read no cluster and model no step; allreduce reads
 * no network and times one all-reduce of --size bytes (no precision, sync
 * scheme or bucket enters it). 0, or 2 with the message printed. */
static int check_command_takes(const char *cmd, const char *a)
{
    static const char *const run[] = {"-c", "--cluster", "-g", "--gpus", "--sync", "--precision", "--bucket-mb",
                                      "--intra-bw", "--inter-bw", "--stack", NULL};
    static const char *const model[] = {"--batch", "--batch-per-gpu", "-p", "--profile", "--pin", "--memory-limit",
                                        "--no-memory-limit", "--optimizer", "--recompute", "--attention",
                                        "--time-limit", NULL};
    static const char *const not_allreduce[] = {"-n", "--network", "--sync", "--precision", "--bucket-mb", NULL};
    static const char *const not_list[] = {"-n", "--network", "--json", NULL};
    char m[200];
    if (!cmd || a[0] != '-') return 0;
    const int no_step = strcmp(cmd, "net") == 0 || strcmp(cmd, "info") == 0 || strcmp(cmd, "import") == 0 ||
                        strcmp(cmd, "list") == 0;
    if (no_step && (listed(run, a) || listed(model, a)))
        snprintf(m, sizeof m, "%s is not an option of %s: it reads no cluster and models no training step", a, cmd);
    else if (strcmp(cmd, "allreduce") == 0 && (listed(model, a) || listed(not_allreduce, a)))
        snprintf(m, sizeof m, "%s is not an option of allreduce: it times one all-reduce of --size bytes over the "
                              "cluster's links, with no network", a);
    else if (strcmp(cmd, "list") == 0 && listed(not_list, a))
        snprintf(m, sizeof m, "%s is not an option of list: it prints the shipped names as text", a);
    else
        return 0;
    return bad("%s", m);
}

static int parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->over.sync = -1;
    o->over.precision = -1;
    o->over.bucket_mb = -1;
    o->step = -1;
    o->overlap = -1;
    o->pipe.schedule = -1;
    int i = 1, optimizer_given = 0;
    if (i < argc && argv[i][0] != '-') o->cmd = argv[i++];
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKES(...)                                                                                                 \
    (strcmp(a, __VA_ARGS__) == 0)
        int takes_value = 1, rc;
        if ((rc = check_command_takes(o->cmd, a)) != 0) return rc;
        optimizer_given |= TAKES("--optimizer");
        if (a[0] != '-' && o->cmd && strcmp(o->cmd, "diff") == 0) {
            if (o->diff.n == 2) return bad("diff takes two strategies; \"%s\" is a third", a);
            o->diff.name[o->diff.n++] = a;
            takes_value = 0;
        } else if (a[0] != '-' && o->cmd && strcmp(o->cmd, "net") == 0) {
            if (o->arg.operand) return bad("net makes one network; \"%s\" is a second family", a);
            o->arg.operand = a;
            takes_value = 0;
        } else if (a[0] != '-' && o->cmd && strcmp(o->cmd, "import") == 0) {
            if (o->arg.operand) return bad("import takes one ONNX file; \"%s\" is a second", a);
            o->arg.operand = a;
            takes_value = 0;
        } else if (TAKES("-n") || TAKES("--network")) o->net = v;
        else if (TAKES("-c") || TAKES("--cluster")) o->cluster = v;
        else if (TAKES("-p") || TAKES("--profile")) o->profile = v;
        else if (TAKES("-s") || TAKES("--strategy")) o->strategy = v;
        else if (TAKES("-o") || TAKES("--output")) o->out = v;
        else if (TAKES("--view")) o->view = v;
        else if (TAKES("--recompute") || TAKES("--attention")) {
            if ((rc = parse_kernel_option(a, v)) != 0) return rc;
        } else if ((rc = parse_size_option(o, a, v)) != 1) {
            if (rc != 0) return rc;
        } else if ((rc = parse_value_option(o, a, v, &takes_value)) != 1) {
            if (rc != 0) return rc;
        } else {
            takes_value = 0;
            if (TAKES("--json")) o->json = 1;
            else if (TAKES("--no-memory-limit")) o->mset.limit = -1;
            else if (TAKES("--steps")) o->steps = 1;
            else if (TAKES("--no-fold")) o->set.no_fold = 1;
            else if (TAKES("--sp")) o->mega.sp = 1;
            else if (TAKES("-h") || TAKES("--help")) {
                cli_usage_write(stdout);
                exit(stdout_status(0));
            } else if (TAKES("--version")) {
                printf("layerwise %s\n", LW_VERSION);
                exit(stdout_status(0));
            } else
                return bad("unknown option \"%s\"", a);
        }
        if (takes_value) {
            if (!v) return bad("%s needs a value", a);
            i++;
        }
#undef TAKES
    }
    if (check_option_use(o, optimizer_given) != 0) return 2;
    if (o->cmd && strcmp(o->cmd, "net") == 0 && netgen_family_from_name(o->arg.operand) < 0)
        return bad(o->arg.operand ? "net makes gpt, llama, bert or vit, not \"%s\"" : "%s",
                   o->arg.operand ? o->arg.operand : "net needs a family: layerwise net gpt|llama|bert|vit [sizes] [-o FILE]");
    if (o->cmd && strcmp(o->cmd, "import") == 0) {
        if (!o->arg.operand) o->arg.operand = o->net;
        if (!o->arg.operand) return bad("%s", "import needs an ONNX file: layerwise import FILE.onnx [-o NET.json]");
    }
    if (!o->net) o->net = DEFAULT_NETWORK;
    if (!o->cluster) o->cluster = DEFAULT_CLUSTER;
    /* "-" is standard output, written through the descriptor (util.h) */
    if (o->out && strcmp(o->out, "-") == 0) {
        o->out = "/dev/stdout";
        o->out_stdout = 1;
    }
    if (o->trace && strcmp(o->trace, "-") == 0) {
        o->trace = "/dev/stdout";
        o->trace_stdout = 1;
    }
    return 0;
}

static void apply_whatif(const opts *o, cluster *c)
{
    settings_apply_sync(c, o->over.sync);
    settings_apply_links(c, o->over.intra_bw, o->over.inter_bw);
}

/* A long final step of the search (a large graph left after the
 * eliminations) shows its percentage on stderr, when that is a terminal;
 * the line is cleared at the end so the result starts clean. */
static void progress_line(double fraction, void *user)
{
    (void)user;
    if (fraction < 1.0)
        fprintf(stderr, "\rlayerwise: final step of the search: %3.0f%%", fraction * 100.0);
    else
        fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* Loads everything and builds the plan for o->set (without tables or a
 * search if unsearched: see plan_options.unsearched). */
static plan *open_plan_as(const opts *o, plan_settings set, int unsearched, lw_error *err)
{
    network *net = plan_load_network(o->net, err);
    if (!net) return NULL;
    cluster *cl = plan_load_cluster(o->cluster, err);
    if (!cl) {
        net_free(net);
        return NULL;
    }
    apply_whatif(o, cl);
    if (settings_apply_stack(cl, o->over.stack, err) != 0 ||
        settings_apply_precision(cl, o->over.precision, o->over.bucket_mb, err) != 0) {
        net_free(net);
        cluster_free(cl);
        return NULL;
    }
    profile *prof = NULL;
    if (o->profile) {
        prof = plan_load_profile(o->profile, err);
        if (!prof) {
            net_free(net);
            cluster_free(cl);
            return NULL;
        }
        /* times measured on another GPU or at another precision are refused,
         * not applied and not silently dropped */
        int checked = profile_check_cluster(prof, cl, err);
        if (checked < 0) {
            profile_free(prof);
            net_free(net);
            cluster_free(cl);
            return NULL;
        }
        if (checked == 1) {
            lw_error w;
            lw_fail(&w, 0, "warning: %s does not record the precision it was measured at (a profile from before "
                    "\"precision\"): it is applied at %s unchecked; add \"precision\" to have it checked",
                    prof->path, precision_name(cl->precision));
            die(&w);
        }
    }
    search_progress_fn progress = isatty(STDERR_FILENO) ? progress_line : NULL;
    /* unsearched: progress for a plan_search later (eval, compare) */
    return plan_open(net, cl, prof, &(plan_options){.set = set, .mem = o->mset, .progress = progress,
                                                     .unsearched = unsearched}, err);
}

static plan *open_plan(const opts *o, plan_settings set, lw_error *err)
{
    return open_plan_as(o, set, 0, err);
}

static int apply_pins(const opts *o, plan *p, lw_error *err)
{
    return settings_apply_pins(p, o->pins, o->n_pins, err);
}

/* ---- text output ---- */

static void print_strategy_text(const plan *p, const int *ci, const strategy_eval *ev, const char *title)
{
    const cost_model *m = plan_model(p);
    char used[64] = "";
    if (ev->gpus_used < plan_gpus(p)) snprintf(used, sizeof used, " (this strategy uses %d)", ev->gpus_used);
    printf("%s: %s on %s, %d GPU%s%s, batch %ld, %s (%s)\n\n", title, plan_net(p)->name, plan_cluster(p)->name, plan_gpus(p),
           plan_gpus(p) == 1 ? "" : "s", used, plan_batch(p), precision_name(plan_cluster(p)->precision), sync_scheme_name(plan_cluster(p)->sync));
    int w = 5;
    for (int i = 0; i < plan_net(p)->n_layers; i++) {
        int l = (int)strlen(plan_net(p)->layers[i].name);
        if (l > w) w = l;
    }
    if (w > 40) w = 40;
    printf("%-*s  %-9s %-13s %-12s %4s %9s %9s %9s %9s\n", w, "layer", "type", "output", "config", "GPUs", "t_c ms",
           "t_s ms", "t_x ms", "total ms");
    for (int i = 0; i < plan_net(p)->n_layers; i++) {
        const layer *l = &plan_net(p)->layers[i];
        const config *c = plan_config(p, i, ci[i]);
        const layer_eval *le = &ev->layers[i];
        char shp[48], cfg[48];
        shape_format(l->out, shp, sizeof shp);
        config_format_layer(l, c, cfg, sizeof cfg);
        printf("%-*.*s  %-9s %-13s %-12s %4d %9.3f %9.3f %9.3f %9.3f%s\n", w, w, l->name, layer_type_name(l->type), shp,
               cfg, config_tasks(c), le->compute_ms, le->sync_ms, le->transfer_ms,
               le->compute_ms + le->sync_ms + le->transfer_ms, le->profiled ? "  (profiled)" : "");
    }
    char bb[32], mb[32];
    lw_format_bytes(ev->bytes_per_step, bb, sizeof bb);
    lw_format_bytes(ev->peak_memory_bytes, mb, sizeof mb);
    printf("\n%-*s  %54s %9.3f %9.3f %9.3f %9.3f\n", w, "total", "", ev->compute_ms, ev->sync_ms, ev->transfer_ms,
           ev->total_ms);
    printf("\nper step %.2f ms = compute %.2f + sync %.2f + transfer %.2f\n", ev->total_ms, ev->compute_ms, ev->sync_ms,
           ev->transfer_ms);
    printf("throughput %.1f images/s, MFU %.1f%% (%.1f TFLOPS per GPU); %s moved between GPUs per step; peak memory %s "
           "per GPU (of %.0f GiB)\n",
           ev->images_per_s, ev->mfu * 100, ev->tflops_per_gpu, bb, mb, plan_cluster(p)->gpu.memory_gib);
    double sim = sim_step_ms(m, ci, SIM_SUMMARY_MAX_TASKS);
    if (!isnan(sim)) {
        double tf, mfu;
        strategy_achieved(m, sim, ev->gpus_used, &tf, &mfu);
        printf("(Eq. 1, the paper's additive model.) Simulated with communication overlapped: %.2f ms per step, "
               "%.1f images/s, MFU %.1f%% (layerwise simulate)\n",
               sim, (double)plan_batch(p) / (sim * 1e-3), mfu * 100);
    }
    if (ev->peak_memory_bytes > plan_cluster(p)->gpu.memory_gib * 1073741824.0)
        printf("warning: this strategy needs more memory than a GPU has\n");
}

static void print_search_summary(const plan *p)
{
    const search_result *r = plan_search_result(p);
    int nn = 0, ne = 0, nf = 0;
    for (int s = 0; s < r->n_steps; s++) {
        if (r->steps[s].kind == ELIM_NODE) nn++;
        else if (r->steps[s].kind == ELIM_FOLD) nf++;
        else ne++;
    }
    if (r->fold)
        printf("\nAlgorithm 1 with folds: %d layers, %d edges; %d fold%s, %d node and %d edge eliminations leave %d "
               "node%s (",
               r->n_nodes, r->n_edges_original, nf, nf == 1 ? "" : "s", nn, ne, r->n_left, r->n_left == 1 ? "" : "s");
    else
        printf("\nAlgorithm 1: %d layers, %d edges; %d node and %d edge eliminations leave %d node%s (", r->n_nodes,
               r->n_edges_original, nn, ne, r->n_left, r->n_left == 1 ? "" : "s");
    for (int i = 0; i < r->n_left && i < 8; i++) printf("%s%s", i ? ", " : "", plan_net(p)->layers[r->left[i]].name);
    if (r->n_left > 8) printf(", ...");
    printf(");\nfinal step: %s over %.0f combinations; cost tables %.1f ms, search %.1f ms\n",
           plan_final_method_name(p), r->final_space, plan_build_ms(p), plan_search_ms(p));
}

/* A memory limit in GiB, or in MiB or bytes when under 0.01 GiB, where
 * "%.2f GiB" would print 0.00 (--memory-limit 1MB). */
static const char *limit_text(double bytes, char *buf, size_t n)
{
    if (bytes >= 0.01 * 1073741824.0) snprintf(buf, n, "%.2f GiB", bytes / 1073741824.0);
    else if (bytes >= 0.01 * 1048576.0) snprintf(buf, n, "%.2f MiB", bytes / 1048576.0);
    else snprintf(buf, n, "%.0f B", bytes);
    return buf;
}

static void print_memory_summary(const plan *p)
{
    const plan_memory *mm = plan_memory_of(p);
    const char *opt = optimizer_name(plan_memory_settings_of(p)->optimizer);
    const double gib = 1073741824.0;
    char lim[32];
    if (!isfinite(mm->limit_bytes)) {
        printf("memory: no limit (--no-memory-limit, the paper's search); the peak counts %s state\n", opt);
        return;
    }
    if (!mm->constrained) {
        double gathered = cost_shard_gather_bytes(plan_model(p));
        char also[80] = "";
        if (gathered > 0) snprintf(also, sizeof also, ", %.2f GiB of %s's two gathered layers", gathered / gib,
                                   sync_scheme_name(plan_cluster(p)->sync));
        printf("memory: fits the limit of %s per GPU (%s state, %.2f GiB workspace%s counted)\n",
               limit_text(mm->limit_bytes, lim, sizeof lim), opt, plan_workspace_bytes(p) / gib, also);
        return;
    }
    printf("memory: the paper's optimum (%.2f ms/step, Eq. 1) needs %.2f GiB per GPU, over the limit of %s;\n",
           mm->unconstrained_ms, mm->unconstrained_peak / gib, limit_text(mm->limit_bytes, lim, sizeof lim));
    if (mm->fits && mm->proven_optimal)
        printf("  the strategy above is the fastest that fits (proven: %ld subproblems, %ld searches, %.0f ms)\n",
               mm->subproblems, mm->searches, mm->ms);
    else if (mm->fits)
        printf("  the strategy above is the fastest that fits found in the time limit; none that fits is faster\n"
               "  than %.2f ms/step (gap %.1f%%, %ld subproblems)\n",
               mm->lower_bound_ms, (plan_best_eval(p)->total_ms - mm->lower_bound_ms) / plan_best_eval(p)->total_ms * 100,
               mm->subproblems);
    else if (!isfinite(mm->lower_bound_ms)) {
        printf("warning: no strategy fits %s per GPU; the smallest peak of any strategy is %.2f GiB",
               limit_text(mm->limit_bytes, lim, sizeof lim), mm->min_peak_bytes / gib);
        if (mm->min_peak_lower < mm->min_peak_bytes * (1 - 1e-4))
            printf(" or less (at least %.2f GiB)", mm->min_peak_lower / gib);
        printf(" per GPU;\n  the strategy above is the paper's optimum\n");
    } else
        printf("warning: no strategy that fits %s per GPU was found in the time limit (none that fits is\n"
               "  faster than %.2f ms/step); the strategy above is the paper's optimum\n",
               limit_text(mm->limit_bytes, lim, sizeof lim), mm->lower_bound_ms);
}

/* search --json: the strategy document and what the memory limit did. */
static char *search_json(const plan *p, const char *algorithm)
{
    char *doc = strategy_to_json(plan_model(p), plan_best(p), plan_best_eval(p), algorithm, plan_search_result(p)->n_left,
                                 plan_final_method_name(p));
    cJSON *root = cJSON_Parse(doc);
    if (!root) return doc;
    free(doc);
    const plan_memory *mm = plan_memory_of(p);
    if (isfinite(mm->limit_bytes)) cJSON_AddNumberToObject(root, "memory_limit_bytes", round(mm->limit_bytes));
    else cJSON_AddNullToObject(root, "memory_limit_bytes");
    cJSON_AddStringToObject(root, "optimizer", optimizer_name(plan_memory_settings_of(p)->optimizer));
    cJSON_AddBoolToObject(root, "fits", mm->fits);
    if (isfinite(mm->lower_bound_ms)) cJSON_AddNumberToObject(root, "lower_bound_ms", mm->lower_bound_ms);
    else cJSON_AddNullToObject(root, "lower_bound_ms");
    cJSON_AddBoolToObject(root, "proven_optimal", mm->proven_optimal);
    if (!mm->fits) cJSON_AddNumberToObject(root, "min_peak_bytes", round(mm->min_peak_bytes));
    doc = cJSON_Print(root);
    cJSON_Delete(root);
    return doc;
}

static void print_steps(const plan *p)
{
    const search_result *r = plan_search_result(p);
    const network *net = plan_net(p);
    printf("\nelimination log:\n");
    for (int s = 0; s < r->n_steps; s++) {
        const elim_step *st = &r->steps[s];
        if (st->kind == ELIM_NODE)
            printf("%4d  node %-28s (%s -> %s) becomes edge e%d\n", s + 1, net->layers[st->node].name,
                   net->layers[st->from].name, net->layers[st->to].name, st->new_edge);
        else if (st->kind == ELIM_FOLD)
            printf("%4d  fold %-28s into %s: e%d (%s -> %s) becomes edge e%d\n", s + 1, net->layers[st->node].name,
                   net->layers[st->into].name, st->e2, net->layers[st->from].name, net->layers[st->to].name,
                   st->new_edge);
        else
            printf("%4d  edges e%d and e%d (%s -> %s) merge into e%d\n", s + 1, st->e1, st->e2,
                   net->layers[st->from].name, net->layers[st->to].name, st->new_edge);
    }
}

/* ---- JSON output ---- */

/* A JSON document to -o FILE (by lw_write_output's rules), else stdout. */
static int emit(const opts *o, const char *doc)
{
    if (o->out) {
        lw_error err = {0};
        size_t n = strlen(doc);
        char *text = lw_malloc(n + 2);
        memcpy(text, doc, n);
        text[n] = '\n';
        text[n + 1] = 0;
        int rc = lw_write_output(o->out, text, n + 1, &err);
        free(text);
        if (rc != 0) return die(&err);
        if (!o->json && !o->out_stdout) lw_say("wrote %s\n", o->out);
        return 0;
    }
    puts(doc);
    return 0;
}

/* ---- commands ---- */

/* search --why-not LAYER: every config of the layer with the best total
 * when it is forced to it (other pins kept, its own ignored), sorted. */

static int search_whynot(const opts *o, const plan *p, int li)
{
    int n = plan_n_configs(p, li);
    double *tot = lw_malloc(sizeof(double) * (size_t)n);
    plan_whynot_all(p, li, tot);
    plan_ranked *rows = plan_rank_configs(tot, n);
    double opt = rows[0].total;
    const layer *l = &plan_net(p)->layers[li];
    int rc = 0;
    if (o->json || o->out) {
        cJSON *root = doc_new("layerwise-whynot/1", plan_model(p), -1);
        cJSON_AddStringToObject(root, "layer", l->name);
        cJSON_AddItemToObject(root, "current", config_to_json(l, plan_config(p, li, plan_best(p)[li])));
        cJSON_AddNumberToObject(root, "best_ms", opt);
        cJSON *arr = cJSON_AddArrayToObject(root, "configs");
        for (int i = 0; i < n; i++) {
            const config *c = plan_config(p, li, rows[i].k);
            cJSON *r = cJSON_CreateObject();
            cJSON_AddItemToObject(r, "config", config_to_json(l, c));
            cJSON_AddNumberToObject(r, "tasks", config_tasks(c));
            cJSON_AddNumberToObject(r, "node_ms", plan_t_c(p, li, rows[i].k) + plan_t_s(p, li, rows[i].k));
            if (isfinite(rows[i].total)) {
                cJSON_AddNumberToObject(r, "total_ms", rows[i].total);
                cJSON_AddNumberToObject(r, "delta_ms", rows[i].total - opt);
            } else {
                cJSON_AddNullToObject(r, "total_ms");
                cJSON_AddNullToObject(r, "delta_ms");
            }
            cJSON_AddItemToArray(arr, r);
        }
        char *doc = cJSON_Print(root);
        rc = emit(o, doc);
        free(doc);
        cJSON_Delete(root);
    }
    if (!o->json) {
        char sh[64], cb[64];
        shape_format(l->out, sh, sizeof sh);
        config_format_layer(l, plan_config(p, li, plan_best(p)[li]), cb, sizeof cb);
        printf("\nwhy not? %s (%s, %s): %d configs; now %s%s. Each row: the best step time with %s forced to\n"
               "that config and every other layer re-optimised (min-marginals of one search).\n\n",
               l->name, layer_type_name(l->type), sh, n, cb, plan_pinned(p)[li] >= 0 ? " (pinned)" : "", l->name);
        printf("   %-14s %5s %10s %12s %10s %8s\n", "config", "tasks", "t_c+t_s", "best total", "delta ms", "delta");
        for (int i = 0; i < n; i++) {
            const config *c = plan_config(p, li, rows[i].k);
            config_format_layer(l, c, cb, sizeof cb);
            const char *mark = rows[i].k == plan_best(p)[li] ? "*" : " ";
            if (!isfinite(rows[i].total)) {
                printf(" %s %-14s %5d %10.3f %12s\n", mark, cb, config_tasks(c),
                       plan_t_c(p, li, rows[i].k) + plan_t_s(p, li, rows[i].k), "none");
                continue;
            }
            double d = rows[i].total - opt;
            printf(" %s %-14s %5d %10.3f %12.3f %+10.3f %+7.1f%%\n", mark, cb, config_tasks(c),
                   plan_t_c(p, li, rows[i].k) + plan_t_s(p, li, rows[i].k), rows[i].total, d,
                   opt > 0 ? d / opt * 100 : 0);
        }
    }
    free(rows);
    free(tot);
    return rc;
}

/* search --explain LAYER: why the layer has its config (explain.h). */
static int search_explain(const opts *o, const plan *p, int li)
{
    lw_error err = {0};
    explain e;
    if (explain_layer(p, li, &e, &err) != 0) return die(&err);
    while (explain_step(p, &e)) {
    }
    int rc = 0;
    if (o->json || o->out) {
        char *doc = explain_json(p, &e);
        rc = emit(o, doc);
        free(doc);
    }
    if (!o->json) {
        char *text = explain_text(p, &e, 80);
        printf("\nexplain %s (%s on %s, %d GPUs; Eq. 1):\n\n%s", plan_net(p)->layers[li].name, plan_net(p)->name, plan_cluster(p)->name,
               plan_gpus(p), text);
        free(text);
    }
    return rc;
}

/* search --refine: the optimum improved under the step simulator. */
static int search_refine(const opts *o, plan *p)
{
    const cost_model *m = plan_model(p);
    refine_result rr;
    unsigned long long seed = o->seed.value ? o->seed.value : 1;
    refine_bounds rb = plan_refine_bounds(p); /* the search's pins and memory limit hold */
    sim_refine(m, plan_best(p), &rb, o->refine_s, seed, &rr);
    strategy_eval ev;
    strategy_evaluate(m, rr.configs, &ev);
    double limit = plan_memory_of(p)->limit_bytes;
    int rc = 0;
    if (o->json || o->out) {
        char *doc = strategy_to_json(m, rr.configs, &ev, "elimination, refined under the simulator", -1, NULL);
        cJSON *root = cJSON_Parse(doc);
        free(doc);
        if (isfinite(limit)) cJSON_AddNumberToObject(root, "memory_limit_bytes", round(limit));
        else cJSON_AddNullToObject(root, "memory_limit_bytes");
        cJSON_AddStringToObject(root, "optimizer", optimizer_name(plan_memory_settings_of(p)->optimizer));
        cJSON_AddBoolToObject(root, "fits", ev.peak_memory_bytes <= limit);
        cJSON *r = cJSON_AddObjectToObject(root, "refine");
        cJSON_AddStringToObject(r, "method", "first-improvement local search over single-layer config changes");
        cJSON_AddNumberToObject(r, "seed", (double)seed);
        cJSON_AddNumberToObject(r, "seconds", o->refine_s);
        cJSON_AddNumberToObject(r, "start_sim_ms", rr.start_ms);
        cJSON_AddNumberToObject(r, "sim_ms", rr.best_ms);
        cJSON_AddNumberToObject(r, "sim_gain_ms", rr.start_ms - rr.best_ms);
        cJSON_AddNumberToObject(r, "eq1_optimum_ms", plan_best_eval(p)->total_ms);
        cJSON_AddNumberToObject(r, "passes", rr.passes);
        cJSON_AddNumberToObject(r, "evaluations", (double)rr.evaluations);
        cJSON_AddBoolToObject(r, "local_optimum", rr.local_optimum);
        cJSON *ch = cJSON_AddArrayToObject(r, "changed");
        for (int i = 0; i < plan_net(p)->n_layers; i++) {
            if (rr.configs[i] == plan_best(p)[i]) continue;
            const layer *l = &plan_net(p)->layers[i];
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "layer", l->name);
            cJSON_AddItemToObject(c, "from", config_to_json(l, plan_config(p, i, plan_best(p)[i])));
            cJSON_AddItemToObject(c, "to", config_to_json(l, plan_config(p, i, rr.configs[i])));
            cJSON_AddItemToArray(ch, c);
        }
        char *out = cJSON_Print(root);
        cJSON_Delete(root);
        rc = emit(o, out);
        free(out);
    }
    if (!o->json) {
        print_strategy_text(p, rr.configs, &ev, "strategy refined under the simulator");
        printf("\nrefined under the simulator from the Eq. 1 optimum (first-improvement local search over single-layer\n"
               "config changes, seed %llu, %d pass%s, %ld strategies simulated, %s):\n",
               seed, rr.passes, rr.passes == 1 ? "" : "es", rr.evaluations,
               rr.local_optimum ? "a local optimum" : "stopped at the time limit");
        printf("  simulated step %.2f -> %.2f ms (%+.2f%%); Eq. 1 %.2f -> %.2f ms\n", rr.start_ms, rr.best_ms,
               rr.start_ms > 0 ? 100.0 * (rr.best_ms - rr.start_ms) / rr.start_ms : 0, plan_best_eval(p)->total_ms,
               ev.total_ms);
        int npin = plan_pin_count(p);
        if (npin) printf("  kept the pin%s (%d layer%s)\n", npin == 1 ? "" : "s", npin, npin == 1 ? "" : "s");
        char lt[32];
        if (isfinite(limit))
            printf("  kept within the memory limit of %s per GPU (peak %.2f GiB)\n", limit_text(limit, lt, sizeof lt),
                   ev.peak_memory_bytes / 1073741824.0);
        printf("  %d layer%s changed%s\n", rr.n_changed, rr.n_changed == 1 ? "" : "s", rr.n_changed ? ":" : "");
        for (int i = 0; i < plan_net(p)->n_layers; i++) {
            if (rr.configs[i] == plan_best(p)[i]) continue;
            char a[48], b[48];
            config_format_layer(&plan_net(p)->layers[i], plan_config(p, i, plan_best(p)[i]), a, sizeof a);
            config_format_layer(&plan_net(p)->layers[i], plan_config(p, i, rr.configs[i]), b, sizeof b);
            printf("    %-28s %-12s -> %s\n", plan_net(p)->layers[i].name, a, b);
        }
    }
    strategy_eval_free(&ev);
    refine_result_free(&rr);
    return rc;
}

/* Whether name is a readable strategy file of PIPE_FORMAT (stages). */
static int strategy_file_has_stages(const char *name)
{
    if (strategy_is_builtin(name) || strcmp(name, "optimum") == 0) return 0;
    size_t len;
    lw_error err = {0};
    char *text = lw_read_file(name, &len, &err);
    int yes = text && pipe_file_is_pipeline(text, len);
    free(text);
    return yes;
}

/* simulate --pp P: the plan's step micro-batch by micro-batch (pipeline.h). */
static int pipeline_simulate(const opts *o, const plan *p, const pipe_plan *pp, int megatron)
{
    lw_error err = {0};
    pipe_sim *r = pipe_plan_simulate(pp);
    int rc = 0;
    if (o->trace) {
        char *tr = pipe_sim_trace(r, pp);
        rc = lw_write_output(o->trace, tr, strlen(tr), &err) != 0 ? die(&err) : 0;
        if (rc == 0 && !o->json && !o->trace_stdout) lw_say("wrote %s\n", o->trace);
        free(tr);
    }
    if (rc == 0 && (o->json || o->out)) {
        cJSON *root = doc_new("layerwise-sim/1", plan_model(p), plan_gpus(p));
        cJSON_AddStringToObject(root, "strategy", megatron == 2 ? o->strategy : megatron ? "megatron" : "optimum");
        doc_add_throughput(root, plan_model(p), "simulated", r->step_ms, plan_gpus(p));
        pipe_plan_to_json(pp, root);
        char *doc = pipe_sim_to_json(r, pp, root);
        cJSON_Delete(root);
        rc = emit(o, doc);
        free(doc);
    } else if (rc == 0) {
        pipe_plan_print(pp, stdout);
        printf("simulated: %.2f ms per step (%s, micro-batch by micro-batch; eq1 %.2f ms); bubble %.1f%% of each GPU's step\n",
               r->step_ms, pipe_schedule_name(pp->schedule), pp->step_ms, 100 * r->bubble_fraction);
    }
    pipe_sim_free(r);
    return rc;
}

/* search --pp P --explain LAYER: the layer's stage and what moving its
 * boundaries would do (pipe_explain_layer), added to root (JSON) or
 * printed. */
static int pipeline_explain(const opts *o, const pipe_plan *pp, cJSON *root)
{
    lw_error err = {0};
    int li = net_find(pp->stages[0].cm->net, o->explain); /* cmd_pipeline checked it */
    pipe_explain e;
    if (pipe_explain_layer(pp, li, &e, &err) != 0) return die(&err);
    if (root) {
        cJSON *x = cJSON_AddObjectToObject(root, "explain");
        cJSON_AddStringToObject(x, "layer", o->explain);
        cJSON_AddNumberToObject(x, "stage", e.stage + 1);
        cJSON_AddNumberToObject(x, "max_t_ms", e.max_t);
        cJSON_AddNumberToObject(x, "sum_t_ms", e.sum_t);
        cJSON_AddNumberToObject(x, "step_ms", e.step_ms);
        cJSON *arr = cJSON_AddArrayToObject(x, "moves");
        for (int i = 0; i < e.n_moves; i++) {
            const pipe_move *mv = &e.moves[i];
            cJSON *m = cJSON_CreateObject();
            cJSON_AddNumberToObject(m, "boundary", mv->boundary + 1);
            cJSON_AddStringToObject(m, "direction", mv->dir < 0 ? "earlier" : "later");
            cJSON_AddBoolToObject(m, "allowed", mv->valid);
            if (mv->valid) {
                cJSON_AddStringToObject(m, "first_layer", pp->stages[0].cm->net->layers[mv->to].name);
                cJSON_AddNumberToObject(m, "t_left_ms", mv->t_left);
                cJSON_AddNumberToObject(m, "t_right_ms", mv->t_right);
                cJSON_AddNumberToObject(m, "max_t_ms", mv->max_t);
                cJSON_AddNumberToObject(m, "sum_t_ms", mv->sum_t);
                cJSON_AddNumberToObject(m, "step_ms", mv->step_ms);
            }
            cJSON_AddItemToArray(arr, m);
        }
        return 0;
    }
    char *text = pipe_explain_text(pp, &e);
    printf("\nexplain %s:\n%s", o->explain, text);
    free(text);
    return 0;
}

/* search --pp P, eval -s megatron --pp P, eval -s FILE of stages (megatron
 * 2), and simulate with them: a pipeline plan (pipeline.h). */
static int cmd_pipeline(const opts *o, int megatron)
{
    lw_error err = {0};
    plan *p = open_plan_as(o, o->set, 1, &err);
    if (!p) return die(&err);
    if (o->explain && net_find(plan_net(p), o->explain) < 0) { /* refused before anything is printed */
        lw_buf b = {0};
        lw_text_printable(&b, o->explain);
        lw_fail(&err, 2, "--explain: \"%s\" is not a layer of %s", b.s, plan_net(p)->name);
        lw_buf_free(&b);
        plan_free(p);
        return die(&err);
    }
    pipe_options po;
    pipe_options_init(&po);
    po.stages = o->pipe.pp;
    po.microbatches = o->pipe.microbatches;
    if (o->pipe.schedule >= 0) po.schedule = (pipe_schedule)o->pipe.schedule;
    po.vp = o->pipe.vp ? o->pipe.vp : 1;
    po.optimizer = o->mset.optimizer;
    po.memory_limit = plan_memory_limit(&o->mset, plan_cluster(p));
    pipe_plan *pp = NULL;
    if (megatron == 2) { /* a strategy file with stages */
        size_t len;
        char *text = lw_read_file(o->strategy, &len, &err);
        if (text)
            pp = pipe_plan_from_json(plan_net(p), plan_cluster(p), plan_profile(p), plan_gpus(p), plan_batch(p), text, len, o->strategy,
                                     o->mset.optimizer, po.memory_limit, &err);
        free(text);
    } else {
        pp = megatron ? pipe_megatron(plan_net(p), plan_cluster(p), plan_profile(p), plan_gpus(p), plan_batch(p), &po, &o->mega, &err)
                      : pipe_search(plan_net(p), plan_cluster(p), plan_profile(p), plan_gpus(p), plan_batch(p), &po, &err);
    }
    int rc = 0;
    if (!pp) {
        rc = die(&err);
    } else if (strcmp(o->cmd, "simulate") == 0) {
        rc = pipeline_simulate(o, p, pp, megatron);
    } else if (o->json || o->out) {
        cJSON *root = pipe_plan_document(pp, plan_model(p), plan_gpus(p),
                                         megatron == 2 ? "file" : megatron ? "megatron" : "pipeline-dp");
        if (o->explain) rc = pipeline_explain(o, pp, root);
        char *doc = rc == 0 ? cJSON_Print(root) : NULL;
        cJSON_Delete(root);
        if (rc == 0) rc = emit(o, doc);
        free(doc);
    } else {
        printf("%s on %s, %d GPUs, batch %ld, %s (%s): %s\n", plan_net(p)->name, plan_cluster(p)->name, plan_gpus(p),
               plan_batch(p), precision_name(plan_cluster(p)->precision), sync_scheme_name(plan_cluster(p)->sync),
               megatron == 2 ? o->strategy : megatron ? "Megatron-LM's plan" : "optimal pipeline");
        pipe_plan_print(pp, stdout);
        if (o->explain) rc = pipeline_explain(o, pp, NULL);
    }
    pipe_plan_free(pp);
    plan_free(p);
    return rc;
}

static int cmd_search(const opts *o)
{
    if (o->pipe.pp) return cmd_pipeline(o, 0);
    lw_error err = {0};
    plan *p = open_plan(o, o->set, &err);
    if (!p || apply_pins(o, p, &err) != 0) {
        plan_free(p);
        return die(&err);
    }
    int rc = 0, wl = o->whynot ? net_find(plan_net(p), o->whynot) : -1;
    if (o->whynot && wl < 0) {
        lw_say("layerwise: --why-not: \"%s\" is not a layer of %s\n", o->whynot, plan_net(p)->name);
        plan_free(p);
        return 2;
    }
    int xl = o->explain ? net_find(plan_net(p), o->explain) : -1;
    if (o->explain && xl < 0) {
        lw_buf b = {0};
        lw_text_printable(&b, o->explain);
        lw_say("layerwise: --explain: \"%s\" is not a layer of %s\n", b.s, plan_net(p)->name);
        lw_buf_free(&b);
        plan_free(p);
        return 2;
    }
    if (o->refine) {
        if (!o->json) {
            print_strategy_text(p, plan_best(p), plan_best_eval(p), o->n_pins ? "best strategy with pins" : "optimal strategy");
            print_search_summary(p);
            printf("\n");
        }
        rc = search_refine(o, p);
    } else if (o->explain) {
        if (!o->json) {
            print_strategy_text(p, plan_best(p), plan_best_eval(p), o->n_pins ? "best strategy with pins" : "optimal strategy");
            print_memory_summary(p);
        }
        rc = search_explain(o, p, xl);
    } else if (o->whynot) {
        if (!o->json) {
            print_strategy_text(p, plan_best(p), plan_best_eval(p), o->n_pins ? "best strategy with pins" : "optimal strategy");
            print_memory_summary(p);
            print_search_summary(p);
        }
        rc = search_whynot(o, p, wl);
    } else if (o->json || o->out) {
        char *doc = search_json(p, o->n_pins ? "elimination (pinned)" : "elimination");
        rc = emit(o, doc);
        free(doc);
        if (rc == 0 && o->out && !o->json) {
            print_strategy_text(p, plan_best(p), plan_best_eval(p), "optimal strategy");
            print_memory_summary(p);
            print_search_summary(p);
        }
    } else {
        print_strategy_text(p, plan_best(p), plan_best_eval(p), o->n_pins ? "best strategy with pins" : "optimal strategy");
        print_memory_summary(p);
        print_search_summary(p);
        if (o->steps) print_steps(p);
    }
    plan_free(p);
    return rc;
}

/* eval's text output compares with the optimum up to this many GPUs (a
 * search there takes seconds at most; above, tens of seconds). */
#define EVAL_SEARCH_MAX_GPUS 64

static int cmd_eval(const opts *o)
{
    if (!o->strategy) return bad("%s", "eval needs -s FILE, or -s data|model|owt|megatron");
    if (o->pipe.pp) return cmd_pipeline(o, 1);
    if (strategy_file_has_stages(o->strategy)) return cmd_pipeline(o, 2);
    lw_error err = {0};
    /* only the entries the strategy uses: no tables, no search (the text
     * output searches for its comparison with the optimum, up to
     * EVAL_SEARCH_MAX_GPUS) */
    plan *p = open_plan_as(o, o->set, 1, &err);
    if (!p) return die(&err);
    int *ci = lw_calloc((size_t)plan_net(p)->n_layers, sizeof(int));
    int b = baseline_from_name(o->strategy);
    const char *algo = o->strategy;
    if (b >= 0) {
        strategy_baseline(plan_model(p), (baseline_kind)b, ci);
    } else if (strcmp(o->strategy, "megatron") == 0) {
        if (strategy_megatron(plan_model(p), &o->mega, ci, &err) != 0) {
            free(ci);
            plan_free(p);
            return die(&err);
        }
    } else {
        size_t len;
        char *text = lw_read_file(o->strategy, &len, &err);
        if (!text || strategy_from_json(plan_model(p), text, len, o->strategy, ci, &err) != 0) {
            free(text);
            free(ci);
            plan_free(p);
            return die(&err);
        }
        free(text);
        algo = "file";
    }
    strategy_eval ev;
    strategy_evaluate(plan_model(p), ci, &ev);
    int rc = 0;
    if (o->json || o->out) {
        char *doc = strategy_to_json(plan_model(p), ci, &ev, algo, -1, NULL);
        cJSON *root = cJSON_Parse(doc);
        if (root) { /* whether it fits the memory limit, as search's document says */
            double limit = plan_memory_limit(plan_memory_settings_of(p), plan_cluster(p));
            free(doc);
            if (isfinite(limit)) cJSON_AddNumberToObject(root, "memory_limit_bytes", round(limit));
            else cJSON_AddNullToObject(root, "memory_limit_bytes");
            cJSON_AddBoolToObject(root, "fits", ev.peak_memory_bytes <= limit);
            doc = cJSON_Print(root);
            cJSON_Delete(root);
        }
        rc = emit(o, doc);
        free(doc);
    }
    if (!o->json) {
        char title[300];
        if (strcmp(o->strategy, "megatron") == 0)
            snprintf(title, sizeof title, "strategy megatron (tensor parallel %d%s)",
                     o->mega.tp ? o->mega.tp : strategy_megatron_default_tp(plan_model(p)),
                     o->mega.sp ? ", sequence parallel" : "");
        else
            snprintf(title, sizeof title, "strategy %s", o->strategy);
        print_strategy_text(p, ci, &ev, title);
        double limit = plan_memory_limit(plan_memory_settings_of(p), plan_cluster(p));
        char lt[32];
        if (isfinite(limit)) /* as the document's "fits" says */
            printf("memory: %s the limit of %s per GPU (peak %.2f GiB, %s state)\n",
                   ev.peak_memory_bytes <= limit ? "fits" : "does NOT fit", limit_text(limit, lt, sizeof lt),
                   ev.peak_memory_bytes / 1073741824.0, optimizer_name(plan_memory_settings_of(p)->optimizer));
        if (plan_gpus(p) > EVAL_SEARCH_MAX_GPUS) {
            printf("the optimum for this setting: not searched at %d GPUs (over %d; layerwise search finds it, up to "
                   "%d GPUs where its tables fit this machine)\n", plan_gpus(p), EVAL_SEARCH_MAX_GPUS, COST_MAX_GPUS);
        } else if (plan_search(p, &err) != 0) {
            strategy_eval_free(&ev);
            free(ci);
            plan_free(p);
            return die(&err);
        } else {
            printf("the optimum for this setting: %.2f ms per step (%.2fx)\n", plan_best_eval(p)->total_ms,
                   ev.total_ms / plan_best_eval(p)->total_ms);
        }
    }
    strategy_eval_free(&ev);
    free(ci);
    plan_free(p);
    return rc;
}

typedef struct row {
    int gpus;
    int kind;      /* ROW_DATA .. ROW_LAYERWISE */
    const char *strategy;
    strategy_eval ev;
    double speedup;
    double sim_ms; /* the simulated step (overlap full) */
    megatron_options mega; /* the megatron row's T (resolved) and sp */
} row;

/* The rows of compare and scale in their order: the paper's baselines,
 * Megatron's plan (transformer networks only), the layer-wise optimum. */
enum { ROW_DATA, ROW_MODEL, ROW_OWT, ROW_MEGATRON, ROW_LAYERWISE, ROW_KINDS };

static row *push_row(plan *p, row *rows, int *n, int kind, const char *name, const int *ci, const strategy_eval *ev,
                     const double *base_ips)
{
    row *r = &rows[(*n)++];
    r->gpus = plan_gpus(p);
    r->kind = kind;
    r->strategy = name;
    r->ev = *ev;
    r->sim_ms = sim_step_ms(plan_model(p), ci, SIM_SUMMARY_MAX_TASKS); /* NaN: too big */
    r->speedup = base_ips && base_ips[kind] > 0 ? r->ev.images_per_s / base_ips[kind] : 0;
    r->mega = (megatron_options){0};
    return r;
}

/* The megatron row's T for --tp tp on gpus GPUs: a power of two over
 * the GPUs a plan uses is capped to them (0 stays 0: the default). */
static int megatron_row_tp(int tp, int gpus)
{
    int G = 1;
    while (G * 2 <= gpus) G *= 2;
    return tp > G && !(tp & (tp - 1)) ? G : tp;
}

/* Megatron's row on a transformer network: T = --tp (capped by the GPU
 * count), or the default. 0, or -1 with err set (a T the network refuses). */
static int add_megatron_row(plan *p, const opts *o, row *rows, int *n, const double *base_ips, lw_error *err)
{
    megatron_options mo = o->mega;
    mo.tp = megatron_row_tp(mo.tp, plan_gpus(p));
    if (!mo.tp) mo.tp = strategy_megatron_default_tp(plan_model(p));
    int *ci = lw_malloc(sizeof(int) * (size_t)plan_net(p)->n_layers);
    int rc = strategy_megatron(plan_model(p), &mo, ci, err);
    if (rc == 0) {
        strategy_eval ev;
        strategy_evaluate(plan_model(p), ci, &ev);
        push_row(p, rows, n, ROW_MEGATRON, "megatron", ci, &ev, base_ips)->mega = mo;
    }
    free(ci);
    return rc;
}

/* --tp and --sp shape compare's and scale's megatron row: on a network
 * without one they would be ignored, so they are refused (exit 2); a --tp
 * the row would refuse on up to gpus GPUs is refused here, before any
 * search, with the row's message. */
static int check_megatron_row(const opts *o, const plan *p, int gpus, lw_error *err)
{
    if ((o->mega.tp || o->mega.sp) && !strategy_megatron_applies(plan_net(p)))
        return lw_fail(err, 2, "%s: network \"%s\" has no transformer layers (attention), so %s has no megatron row",
                       o->mega.tp ? "--tp" : "--sp", plan_net(p)->name, o->cmd);
    if (o->mega.tp) return strategy_megatron_check_tp(plan_net(p), gpus, megatron_row_tp(o->mega.tp, gpus), err);
    return 0;
}

static int add_rows(plan *p, const opts *o, row *rows, int *n, const double *base_ips, lw_error *err)
{
    int L = plan_net(p)->n_layers, shown = plan_unsearched(p) ? BASE__COUNT : STRATEGY_COMPARED; /* unsearched: the baselines only */
    strategy_eval ev[STRATEGY_COMPARED];
    int *ci = lw_malloc(sizeof(int) * STRATEGY_COMPARED * (size_t)(L ? L : 1));
    strategy_evaluate_compared(plan_model(p), plan_best(p), ev, ci);
    for (int s = shown; s < STRATEGY_COMPARED; s++) strategy_eval_free(&ev[s]);
    int rc = 0, mega = strategy_megatron_applies(plan_net(p));
    for (int s = 0; s < shown; s++) {
        if (s == BASE__COUNT && mega && rc == 0) rc = add_megatron_row(p, o, rows, n, base_ips, err);
        int kind = s < BASE__COUNT ? s : ROW_LAYERWISE;
        push_row(p, rows, n, kind, strategy_compared_names[s], ci + (size_t)s * (size_t)L, &ev[s], base_ips);
    }
    if (shown == BASE__COUNT && mega && rc == 0) rc = add_megatron_row(p, o, rows, n, base_ips, err);
    free(ci);
    return rc;
}

/* A row's throughput figures, each with the model that made it: Eq. 1's
 * ("estimator": "eq1", beside images_per_s) and the simulated step's (the
 * sim_ fields, "sim_estimator": "simulated"; null where it was too large to
 * simulate). */
static void add_row_throughput(cJSON *r, const row *w)
{
    const strategy_eval *ev = &w->ev;
    cJSON_AddStringToObject(r, "estimator", "eq1");
    cJSON_AddNumberToObject(r, "model_flops_per_step", ev->model_flops_per_step);
    cJSON_AddNumberToObject(r, "tflops_per_gpu", ev->tflops_per_gpu);
    cJSON_AddNumberToObject(r, "mfu", ev->mfu);
    cJSON_AddStringToObject(r, "sim_estimator", "simulated");
    if (w->sim_ms > 0) {
        double k = ev->total_ms / w->sim_ms; /* the same work in the simulated step */
        cJSON_AddNumberToObject(r, "sim_step_ms", w->sim_ms);
        cJSON_AddNumberToObject(r, "sim_images_per_s", ev->images_per_s * k);
        cJSON_AddNumberToObject(r, "sim_tflops_per_gpu", ev->tflops_per_gpu * k);
        cJSON_AddNumberToObject(r, "sim_mfu", ev->mfu * k);
    } else {
        cJSON_AddNullToObject(r, "sim_step_ms");
        cJSON_AddNullToObject(r, "sim_images_per_s");
        cJSON_AddNullToObject(r, "sim_tflops_per_gpu");
        cJSON_AddNullToObject(r, "sim_mfu");
    }
}

/* --json: the rows as JSON on stdout, or in -o FILE; -o FILE without --json:
 * the JSON in the file and the table on stdout. */
/* compare: the layer-wise optimum under each sync scheme (the scheme is a
 * global choice: the search runs once per scheme, each exact). */
typedef struct scheme_row {
    sync_scheme sync;
    double total_ms, sync_ms, images_per_s, bytes_per_step, peak_bytes;
    int fits;
} scheme_row;

/* Fills sr[SYNC__COUNT] from p searched under every scheme in turn, then
 * puts p's scheme back. 0, or -1 with err set. */
static int scheme_rows(plan *p, scheme_row *sr, lw_error *err)
{
    sync_scheme was = plan_cluster(p)->sync;
    for (int s = 0; s < SYNC__COUNT; s++) {
        if (plan_apply(p, &(plan_change){.sync_set = 1, .sync = (sync_scheme)s}, err) != 0) return -1;
        const strategy_eval *e = plan_best_eval(p);
        sr[s] = (scheme_row){(sync_scheme)s, e->total_ms, e->sync_ms, e->images_per_s, e->bytes_per_step,
                             e->peak_memory_bytes, plan_memory_of(p)->fits};
    }
    return plan_apply(p, &(plan_change){.sync_set = 1, .sync = was}, err) != 0 ? -1 : 0;
}

static cJSON *scheme_rows_json(const scheme_row *sr)
{
    cJSON *arr = cJSON_CreateArray();
    for (int s = 0; s < SYNC__COUNT; s++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "sync", sync_scheme_name(sr[s].sync));
        cJSON_AddStringToObject(r, "strategy", "layer-wise");
        cJSON_AddNumberToObject(r, "total_ms", sr[s].total_ms);
        cJSON_AddNumberToObject(r, "sync_ms", sr[s].sync_ms);
        cJSON_AddNumberToObject(r, "images_per_s", sr[s].images_per_s);
        cJSON_AddNumberToObject(r, "bytes_per_step", sr[s].bytes_per_step);
        cJSON_AddNumberToObject(r, "peak_memory_bytes", round(sr[s].peak_bytes));
        cJSON_AddBoolToObject(r, "fits", sr[s].fits);
        cJSON_AddItemToArray(arr, r);
    }
    return arr;
}

static void scheme_rows_text(const plan *p, const scheme_row *sr)
{
    double limit = plan_memory_limit(plan_memory_settings_of(p), plan_cluster(p));
    char lim[48] = "no memory limit";
    char lt[32];
    if (isfinite(limit)) snprintf(lim, sizeof lim, "limit %s per GPU", limit_text(limit, lt, sizeof lt));
    printf("\nlayer-wise optimum under each sync scheme (searched once per scheme; %s, %s state):\n", lim,
           optimizer_name(plan_memory_settings_of(p)->optimizer));
    printf("  %-16s %10s %10s %11s %12s %10s  %s\n", "sync", "step ms", "sync", "images/s", "bytes/step", "peak GiB",
           "fits");
    for (int s = 0; s < SYNC__COUNT; s++) {
        char bb[32];
        lw_format_bytes(sr[s].bytes_per_step, bb, sizeof bb);
        printf("  %-16s %10.2f %10.2f %11.1f %12s %10.2f  %s%s\n", sync_scheme_name(sr[s].sync), sr[s].total_ms,
               sr[s].sync_ms, sr[s].images_per_s, bb, sr[s].peak_bytes / 1073741824.0, sr[s].fits ? "yes" : "no",
               sr[s].sync == plan_cluster(p)->sync ? "  (in use)" : "");
    }
}

/* compare --pp P: the pipelines beside the rows (JSON "pipelines"; text a
 * table after them): the optimal one and, on a transformer, Megatron's, or
 * why Megatron's P equal stages do not exist there (its blocks not a
 * multiple of P): the optimal pipeline is shown either way. */
typedef struct compare_pipes {
    pipe_plan *pp[2];
    char megatron_why[sizeof(((lw_error *)0)->msg)]; /* "" unless Megatron's failed */
} compare_pipes;

static cJSON *pipelines_json(const plan *p, const compare_pipes *pipes)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < 2; i++) {
        const pipe_plan *pp = pipes->pp[i];
        if (!pp && i == 1 && pipes->megatron_why[0]) { /* as scale's rows say why there is none */
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "strategy", "megatron");
            cJSON_AddNullToObject(r, "total_ms");
            cJSON_AddStringToObject(r, "why_not", pipes->megatron_why);
            cJSON_AddItemToArray(arr, r);
        }
        if (!pp) continue;
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "gpus", pp->gpus);
        cJSON_AddStringToObject(r, "strategy", i ? "megatron" : "pipeline");
        cJSON_AddNumberToObject(r, "pp", pp->p);
        cJSON_AddNumberToObject(r, "microbatches", pp->m);
        cJSON_AddStringToObject(r, "schedule", pipe_schedule_name(pp->schedule));
        cJSON_AddNumberToObject(r, "virtual_stages", pp->v);
        cJSON_AddNumberToObject(r, "total_ms", pp->step_ms);
        doc_add_throughput(r, plan_model(p), "eq1", pp->step_ms, pp->gpus);
        cJSON_AddNumberToObject(r, "bubble_fraction", pp->bubble_fraction);
        cJSON_AddNumberToObject(r, "peak_memory_bytes", round(pp->peak_memory_bytes));
        cJSON_AddBoolToObject(r, "fits", pp->fits);
        cJSON_AddItemToArray(arr, r);
    }
    return arr;
}

static void pipelines_text(const compare_pipes *pipes)
{
    printf("\npipelines (Eq. 1 per stage, pipelined step: cost-model.md)\n%-10s %4s %6s %-12s %10s %8s %12s %5s\n",
           "strategy", "pp", "micro", "schedule", "step ms", "bubble", "memory/GPU", "fits");
    for (int i = 0; i < 2; i++) {
        const pipe_plan *pp = pipes->pp[i];
        if (!pp && i == 1 && pipes->megatron_why[0]) printf("%-10s none: %s\n", "megatron", pipes->megatron_why);
        if (!pp) continue;
        char mem[32];
        lw_format_bytes(pp->peak_memory_bytes, mem, sizeof mem);
        printf("%-10s %4d %6d %-12s %10.2f %7.1f%% %12s %5s\n", i ? "megatron" : "pipeline", pp->p, pp->m,
               pipe_schedule_name(pp->schedule), pp->step_ms, 100 * pp->bubble_fraction, mem, pp->fits ? "yes" : "no");
    }
}

/* scale --pp P: the pipelined optimum at one GPU count (plan_scale_pipe_compute:
 * its figures, or why there is none), and its speed-up over one GPU's
 * layer-wise optimum. */
typedef struct pipe_row {
    int gpus;
    plan_scale_pipe pipe;
    double speedup;
} pipe_row;

static void scale_pipeline_row(const opts *o, const plan *q, double base_ips, pipe_row *r)
{
    plan_pipe_settings ps = {.stages = o->pipe.pp, .microbatches = o->pipe.microbatches,
                             .schedule = o->pipe.schedule >= 0 ? o->pipe.schedule + 1 : 0,
                             .vp = o->pipe.vp ? o->pipe.vp : 1};
    *r = (pipe_row){.gpus = plan_gpus(q)};
    plan_scale_pipe_compute(q, &ps, &r->pipe);
    if (r->pipe.found) r->speedup = base_ips > 0 ? r->pipe.images_per_s / base_ips : 0;
}

/* The pipeline row of count g (NULL: none). */
static const pipe_row *find_pipe_row(const pipe_row *pr, int npr, int g)
{
    for (int i = 0; i < npr; i++)
        if (pr[i].gpus == g) return &pr[i];
    return NULL;
}

static cJSON *pipe_row_json(const pipe_row *r, int pp)
{
    cJSON *o = cJSON_CreateObject();
    const plan_scale_pipe *q = &r->pipe;
    cJSON_AddNumberToObject(o, "gpus", r->gpus);
    cJSON_AddStringToObject(o, "strategy", "pipeline");
    cJSON_AddNumberToObject(o, "pp", pp);
    if (!q->found) {
        cJSON_AddNullToObject(o, "total_ms");
        cJSON_AddNullToObject(o, "images_per_s");
        cJSON_AddStringToObject(o, "why_not", q->why);
        return o;
    }
    cJSON_AddNumberToObject(o, "gpus_used", q->gpus_used);
    cJSON_AddNumberToObject(o, "microbatches", q->microbatches);
    cJSON_AddStringToObject(o, "schedule", plan_schedule_name(q->schedule + 1));
    cJSON_AddNumberToObject(o, "virtual_stages", q->vp);
    cJSON_AddNumberToObject(o, "total_ms", q->total_ms);
    cJSON_AddNumberToObject(o, "images_per_s", q->images_per_s);
    cJSON_AddStringToObject(o, "estimator", "eq1");
    cJSON_AddNumberToObject(o, "model_flops_per_step", q->model_flops);
    cJSON_AddNumberToObject(o, "tflops_per_gpu", q->tflops);
    cJSON_AddNumberToObject(o, "mfu", q->mfu);
    cJSON_AddNumberToObject(o, "bubble_fraction", q->bubble_fraction);
    cJSON_AddNumberToObject(o, "peak_memory_bytes", round(q->peak_memory_bytes));
    cJSON_AddBoolToObject(o, "fits", q->fits);
    cJSON_AddNumberToObject(o, "speedup", r->speedup);
    return o;
}

static void pipe_row_text(const pipe_row *r)
{
    const plan_scale_pipe *q = &r->pipe;
    if (!q->found) {
        printf("%5d  %-10s %10s  (%s)\n", r->gpus, "pipeline", "-", q->why);
        return;
    }
    char sp[16], mf[16];
    snprintf(sp, sizeof sp, "%.2fx", r->speedup);
    snprintf(mf, sizeof mf, "%.1f%%", q->mfu * 100);
    printf("%5d  %-10s %10.2f %10s %10s %10s %11.1f %6s %8s %12s %10s\n", r->gpus, "pipeline", q->total_ms, "-", "-", "-",
           q->images_per_s, mf, sp, "-", "-");
}

/* After the table: each pipeline row's stages, micro-batches, bubble and
 * memory, or why there is none. */
static void pipe_rows_note(const pipe_row *pr, int npr, int pp)
{
    printf("\npipeline: the optimal pipeline of --pp %d stages at each count (Eq. 1 per stage, pipelined step: "
           "cost-model.md; speed-up over one GPU's layer-wise optimum)\n", pp);
    for (int i = 0; i < npr; i++) {
        const plan_scale_pipe *q = &pr[i].pipe;
        if (!q->found) {
            printf("  %d GPU%s: none: %s\n", pr[i].gpus, pr[i].gpus == 1 ? "" : "s", q->why);
            continue;
        }
        char mem[32];
        lw_format_bytes(q->peak_memory_bytes, mem, sizeof mem);
        printf("  %d GPUs: %d stages x %d micro-batches (%s), bubble %.1f%%, memory %s per GPU, %s\n", pr[i].gpus,
               q->stages, q->microbatches, plan_schedule_name(q->schedule + 1), 100 * q->bubble_fraction, mem,
               q->fits ? "fits" : "does not fit");
    }
}

/* After compare's and scale's table: the rows over the memory limit, which
 * the table's figures do not show (the layer-wise row is the fastest that
 * fits where one does; the baselines are what they are). */
static void rows_memory_note(const plan *p, const row *rows, int n)
{
    double limit = plan_memory_limit(plan_memory_settings_of(p), plan_cluster(p));
    char lt[32];
    int first = 1;
    for (int i = 0; i < n; i++) {
        if (!(rows[i].ev.peak_memory_bytes > limit)) continue;
        if (first) printf("\nover the memory limit of %s per GPU: ", limit_text(limit, lt, sizeof lt));
        printf("%s%s at %d GPU%s (%.2f GiB)", first ? "" : "; ", rows[i].strategy, rows[i].gpus,
               rows[i].gpus == 1 ? "" : "s", rows[i].ev.peak_memory_bytes / 1073741824.0);
        first = 0;
    }
    if (!first) printf("\n");
}

static int print_rows(const opts *o, const plan *p, row *rows, int n, int with_speedup, const scheme_row *sr,
                      const compare_pipes *pipes, const pipe_row *pr, int npr)
{
    if (o->json || o->out) {
        double limit = plan_memory_limit(plan_memory_settings_of(p), plan_cluster(p));
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "network", plan_net(p)->name);
        cJSON_AddStringToObject(root, "cluster", plan_cluster(p)->name);
        cJSON_AddStringToObject(root, "precision", precision_name(plan_cluster(p)->precision));
        cJSON *arr = cJSON_AddArrayToObject(root, "rows");
        for (int i = 0; i < n; i++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddNumberToObject(r, "gpus", rows[i].gpus);
            cJSON_AddNumberToObject(r, "gpus_used", rows[i].ev.gpus_used);
            cJSON_AddStringToObject(r, "strategy", rows[i].strategy);
            if (rows[i].kind == ROW_MEGATRON) {
                cJSON_AddNumberToObject(r, "tp", rows[i].mega.tp);
                cJSON_AddBoolToObject(r, "sp", rows[i].mega.sp);
            }
            cJSON_AddNumberToObject(r, "total_ms", rows[i].ev.total_ms);
            cJSON_AddNumberToObject(r, "compute_ms", rows[i].ev.compute_ms);
            cJSON_AddNumberToObject(r, "sync_ms", rows[i].ev.sync_ms);
            cJSON_AddNumberToObject(r, "transfer_ms", rows[i].ev.transfer_ms);
            cJSON_AddNumberToObject(r, "images_per_s", rows[i].ev.images_per_s);
            add_row_throughput(r, &rows[i]);
            cJSON_AddNumberToObject(r, "bytes_per_step", rows[i].ev.bytes_per_step);
            if (with_speedup) cJSON_AddNumberToObject(r, "speedup", rows[i].speedup);
            cJSON_AddNumberToObject(r, "peak_memory_bytes", round(rows[i].ev.peak_memory_bytes));
            cJSON_AddBoolToObject(r, "fits", rows[i].ev.peak_memory_bytes <= limit);
            cJSON_AddItemToArray(arr, r);
            const pipe_row *w = i + 1 == n || rows[i + 1].gpus != rows[i].gpus ? find_pipe_row(pr, npr, rows[i].gpus) : NULL;
            if (w) cJSON_AddItemToArray(arr, pipe_row_json(w, o->pipe.pp));
        }
        if (sr) cJSON_AddItemToObject(root, "schemes", scheme_rows_json(sr));
        if (pipes) cJSON_AddItemToObject(root, "pipelines", pipelines_json(p, pipes));
        char *s = cJSON_Print(root);
        int rc = emit(o, s);
        free(s);
        cJSON_Delete(root);
        if (rc != 0 || o->json) return rc;
    }
    printf("%s on %s (%s, %s), batch %ld %s\n\n", plan_net(p)->name, plan_cluster(p)->name, precision_name(plan_cluster(p)->precision),
           sync_scheme_name(plan_cluster(p)->sync), plan_batch_for(plan_run_settings(p), 1),
           plan_run_settings(p)->global_batch ? "in all (fixed)" : "per GPU");
    printf("step ms, images/s and MFU: Eq. 1 (the paper's additive model); sim ms: simulated step with overlap\n\n");
    printf("%5s  %-10s %10s %10s %10s %10s %11s %6s %8s %12s %10s\n", "GPUs", "strategy", "step ms", "compute", "sync",
           "transfer", "images/s", "MFU", with_speedup ? "speed-up" : "", "bytes/step", "sim ms");
    for (int i = 0; i < n; i++) {
        char bb[32], sp[16] = "";
        lw_format_bytes(rows[i].ev.bytes_per_step, bb, sizeof bb);
        if (with_speedup) snprintf(sp, sizeof sp, "%.2fx", rows[i].speedup);
        char sm[24] = "-";
        if (rows[i].sim_ms > 0) snprintf(sm, sizeof sm, "%.2f", rows[i].sim_ms);
        char mfu[16];
        snprintf(mfu, sizeof mfu, "%.1f%%", rows[i].ev.mfu * 100);
        printf("%5d  %-10s %10.2f %10.2f %10.2f %10.2f %11.1f %6s %8s %12s %10s\n", rows[i].gpus, rows[i].strategy,
               rows[i].ev.total_ms, rows[i].ev.compute_ms, rows[i].ev.sync_ms, rows[i].ev.transfer_ms,
               rows[i].ev.images_per_s, mfu, sp, bb, sm);
        const pipe_row *w = i + 1 == n || rows[i + 1].gpus != rows[i].gpus ? find_pipe_row(pr, npr, rows[i].gpus) : NULL;
        if (w) pipe_row_text(w);
        if (i + 1 < n && rows[i + 1].gpus != rows[i].gpus) printf("\n");
    }
    if (npr) pipe_rows_note(pr, npr, o->pipe.pp);
    for (int i = 0; i < n; i++)
        if (rows[i].gpus > PLAN_AUTO_SEARCH_MAX_GPUS) {
            printf("\nlayer-wise: not searched above %d GPUs (a search there takes tens of seconds or more: "
                   "layerwise search finds it, up to %d GPUs where its tables fit this machine); the baselines are "
                   "evaluated up to %d\n", PLAN_AUTO_SEARCH_MAX_GPUS, COST_MAX_GPUS, COST_EVAL_MAX_GPUS);
            break;
        }
    int said = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].kind == ROW_MEGATRON) {
            if (!said)
                printf("\nmegatron: Megatron-LM's plan, tensor parallel over consecutive GPUs (--tp%s), data parallel "
                       "over the groups; tensor-parallel degree", rows[i].mega.sp ? ", with --sp sequence parallel" : "");
            printf("%s %d", said ? "," : "", rows[i].mega.tp);
            if (with_speedup) printf(" at %d GPU%s", rows[i].gpus, rows[i].gpus == 1 ? "" : "s");
            said = 1;
        }
    if (said) printf("\n");
    int first = 1;
    for (int i = 0; i < n; i++)
        if (rows[i].ev.gpus_used < rows[i].gpus) {
            printf("%s%s at %d GPUs uses %d", first ? "\nGPUs really used: " : "; ", rows[i].strategy, rows[i].gpus,
                   rows[i].ev.gpus_used);
            first = 0;
        }
    if (!first) printf(" (degrees are powers of two, each at most its dimension)\n");
    rows_memory_note(p, rows, n);
    return 0;
}

/* compare --pp: the optimal pipeline and, on a transformer, Megatron's. */
static int compare_pipelines(const opts *o, const plan *p, compare_pipes *pipes, lw_error *err)
{
    pipe_options po;
    pipe_options_init(&po);
    po.stages = o->pipe.pp;
    po.microbatches = o->pipe.microbatches;
    if (o->pipe.schedule >= 0) po.schedule = (pipe_schedule)o->pipe.schedule;
    po.vp = o->pipe.vp ? o->pipe.vp : 1;
    po.optimizer = o->mset.optimizer;
    po.memory_limit = plan_memory_limit(&o->mset, plan_cluster(p));
    pipes->pp[0] = pipe_search(plan_net(p), plan_cluster(p), plan_profile(p), plan_gpus(p), plan_batch(p), &po, err);
    if (!pipes->pp[0]) return -1;
    if (!strategy_megatron_applies(plan_net(p))) return 0;
    lw_error why = {0};
    pipes->pp[1] = pipe_megatron(plan_net(p), plan_cluster(p), plan_profile(p), plan_gpus(p), plan_batch(p), &po, &o->mega, &why);
    if (!pipes->pp[1]) snprintf(pipes->megatron_why, sizeof pipes->megatron_why, "%s", why.msg);
    return 0;
}

static int cmd_compare(const opts *o)
{
    lw_error err = {0};
    /* above the search's limit the baselines alone, without tables (as
     * scale); else the plan searched as well */
    plan *p = open_plan_as(o, o->set, 1, &err);
    if (p && (check_megatron_row(o, p, plan_gpus(p), &err) != 0 ||
              (plan_gpus(p) <= PLAN_AUTO_SEARCH_MAX_GPUS && plan_search(p, &err) != 0))) {
        plan_free(p);
        p = NULL;
    }
    if (!p) return die(&err);
    row rows[ROW_KINDS];
    int n = 0;
    int rc = add_rows(p, o, rows, &n, NULL, &err) != 0 ? die(&err) : 0;
    scheme_row sr[SYNC__COUNT];
    int schemes = rc == 0 && !plan_unsearched(p); /* searched: each scheme's optimum beside the baselines */
    if (schemes && scheme_rows(p, sr, &err) != 0) rc = die(&err), schemes = 0;
    compare_pipes pipes = {{NULL, NULL}, ""};
    if (rc == 0 && o->pipe.pp) rc = compare_pipelines(o, p, &pipes, &err) != 0 ? die(&err) : 0;
    if (rc == 0) rc = print_rows(o, p, rows, n, 0, schemes ? sr : NULL, o->pipe.pp ? &pipes : NULL, NULL, 0);
    if (rc == 0 && !o->json && schemes) scheme_rows_text(p, sr);
    if (rc == 0 && !o->json && o->pipe.pp) pipelines_text(&pipes);
    pipe_plan_free(pipes.pp[0]);
    pipe_plan_free(pipes.pp[1]);
    for (int i = 0; i < n; i++) strategy_eval_free(&rows[i].ev);
    plan_free(p);
    return rc;
}

static int cmd_scale(const opts *o)
{
    lw_error err = {0};
    int counts[64], nc = 0;
    if (o->gpus_list) {
        const char *s = o->gpus_list;
        while (*s) {
            char *end;
            errno = 0;
            long v = strtol(s, &end, 10);
            if (end == s || errno || v < 1 || v > CLUSTER_MAX_GPUS || (*end && *end != ',') || nc == 64)
                return bad("--gpus \"%s\" must be a comma-separated list of GPU counts, e.g. 1,2,4,8,16", o->gpus_list);
            for (int k = 0; k < nc; k++)
                if (counts[k] == v) {
                    lw_error e;
                    lw_fail(&e, 2, "--gpus \"%.200s\" lists %ld twice: give each count once", o->gpus_list, v);
                    die(&e);
                    fprintf(stderr, "(see layerwise --help)\n");
                    return 2;
                }
            counts[nc++] = (int)v;
            s = *end ? end + 1 : end;
            if (*end && !*s) /* "1,2,": a trailing comma names no count */
                return bad("--gpus \"%s\" must be a comma-separated list of GPU counts, e.g. 1,2,4,8,16", o->gpus_list);
        }
        if (nc == 0) return bad("%s", "--gpus \"\" names no GPU count: give a list such as 1,2,4,8,16");
    }
    plan_settings set = o->set;
    set.gpus = 1;
    plan *p = open_plan(o, set, &err);
    if (!p) return die(&err);
    if (!nc) {
        int total = cluster_gpus(plan_cluster(p));
        for (int g = 1; g <= total && nc < 64; g *= 2) counts[nc++] = g;
        if (counts[nc - 1] != total && nc < 64) counts[nc++] = total;
    }
    /* every count is checked before any is computed */
    for (int i = 0; i < nc; i++) {
        if (counts[i] > cluster_gpus(plan_cluster(p))) {
            lw_say("layerwise: %d GPUs requested, but cluster \"%s\" has %d\n", counts[i], plan_cluster(p)->name,
                    cluster_gpus(plan_cluster(p)));
            plan_free(p);
            return 2;
        }
        if (counts[i] > COST_EVAL_MAX_GPUS) {
            fprintf(stderr, "layerwise: %d GPUs: the cost model evaluates at most %d; give --gpus with counts up to %d\n",
                    counts[i], COST_EVAL_MAX_GPUS, COST_EVAL_MAX_GPUS);
            plan_free(p);
            return 2;
        }
    }
    int most = 1;
    for (int i = 0; i < nc; i++) most = counts[i] > most ? counts[i] : most;
    if (check_megatron_row(o, p, most, &err) != 0) {
        plan_free(p);
        return die(&err);
    }
    row *rows = lw_calloc((size_t)nc * ROW_KINDS + ROW_KINDS, sizeof(row));
    pipe_row prow[64] = {{0}};
    int n = 0;
    double base[ROW_KINDS] = {0};
    int rc = 0;
    {
        row one[ROW_KINDS];
        int k = 0;
        if (add_rows(p, o, one, &k, NULL, &err) != 0) rc = die(&err);
        for (int s = 0; s < k; s++) {
            base[one[s].kind] = one[s].ev.images_per_s;
            strategy_eval_free(&one[s].ev);
        }
    }
    /* above the search's limit, the baselines alone, without tables */
    plan *big = NULL;
    for (int i = 0; i < nc && rc == 0; i++) {
        plan_settings next = *plan_run_settings(p);
        next.gpus = counts[i];
        plan *q = p;
        if (counts[i] > PLAN_AUTO_SEARCH_MAX_GPUS) {
            if (!big) big = open_plan_as(o, next, 1, &err);
            q = big;
        }
        if (!q || plan_apply(q, &(plan_change){.set = &next}, &err) != 0 || add_rows(q, o, rows, &n, base, &err) != 0)
            rc = die(&err);
        else if (o->pipe.pp)
            scale_pipeline_row(o, q, base[ROW_LAYERWISE], &prow[i]);
    }
    if (rc == 0) rc = print_rows(o, p, rows, n, 1, NULL, NULL, prow, o->pipe.pp ? nc : 0);
    for (int k = 0; k < n; k++) strategy_eval_free(&rows[k].ev);
    free(rows);
    plan_free(big);
    plan_free(p);
    return rc;
}

static int cmd_costs(const opts *o)
{
    if (!o->json) return bad("%s", "costs prints JSON only: add --json");
    lw_error err = {0};
    plan *p = open_plan(o, o->set, &err);
    if (!p) return die(&err);
    const cost_model *m = plan_model(p);
    cJSON *root = doc_new("layerwise-costs/1", plan_model(p), -1);
    cJSON_AddStringToObject(root, "optimizer", optimizer_name(plan_memory_settings_of(p)->optimizer));
    cJSON_AddNumberToObject(root, "workspace_bytes", round(plan_workspace_bytes(p)));
    cJSON_AddStringToObject(root, "sync", sync_scheme_name(plan_cluster(p)->sync));
    /* zero3/hsdp: the two gathered layers every GPU holds besides its layers' terms (0 otherwise) */
    cJSON_AddNumberToObject(root, "gathered_weights_bytes", round(cost_shard_gather_bytes(m)));
    cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
    for (int i = 0; i < plan_net(p)->n_layers; i++) {
        const layer *l = &plan_net(p)->layers[i];
        cJSON *nd = cJSON_CreateObject();
        cJSON_AddStringToObject(nd, "name", l->name);
        cJSON *cf = cJSON_AddArrayToObject(nd, "configs");
        cJSON *cs = cJSON_AddArrayToObject(nd, "cost_ms");
        cJSON *mb = cJSON_AddArrayToObject(nd, "memory_bytes");
        for (int k = 0; k < plan_n_configs(p, i); k++) {
            cJSON_AddItemToArray(cf, config_to_json(l, plan_config(p, i, k)));
            cJSON_AddItemToArray(cs, cJSON_CreateNumber(plan_t_c(p, i, k) + plan_t_s(p, i, k)));
            cJSON *per = cJSON_CreateArray(); /* GPU g holds task g; a config of T tasks lists T GPUs */
            for (int g = 0; g < config_tasks(plan_config(p, i, k)); g++)
                cJSON_AddItemToArray(per, cJSON_CreateNumber(round(plan_task_memory(p, i, plan_config(p, i, k), g))));
            cJSON_AddItemToArray(mb, per);
        }
        cJSON_AddItemToArray(nodes, nd);
    }
    cJSON *edges = cJSON_AddArrayToObject(root, "edges");
    for (int e = 0; e < plan_n_edges(p); e++) {
        int a, b;
        plan_edge(p, e, &a, &b);
        cJSON *ed = cJSON_CreateObject();
        cJSON_AddStringToObject(ed, "from", plan_net(p)->layers[a].name);
        cJSON_AddStringToObject(ed, "to", plan_net(p)->layers[b].name);
        cJSON *rowsj = cJSON_AddArrayToObject(ed, "cost_ms");
        for (int i = 0; i < plan_n_configs(p, a); i++) {
            cJSON *r = cJSON_CreateDoubleArray(plan_tx_row(p, e, i), plan_n_configs(p, b));
            cJSON_AddItemToArray(rowsj, r);
        }
        cJSON_AddItemToArray(edges, ed);
    }
    /* the tie terms (issue 32), edges between layers that are not
     * neighbours: a tied table moved between the embedding's layout and the
     * lm_head's; Eq. 1 and the search count them as any edge */
    for (int k = 0; k < m->n_ties; k++) {
        const cost_tie *t = &m->ties[k];
        if (!t->t_tie) continue; /* a model without tables (never here: costs builds them) */
        cJSON *ed = cJSON_CreateObject();
        cJSON_AddStringToObject(ed, "from", plan_net(p)->layers[t->embed].name);
        cJSON_AddStringToObject(ed, "to", plan_net(p)->layers[t->lm_head].name);
        cJSON_AddStringToObject(ed, "kind", "tie");
        cJSON *rowsj = cJSON_AddArrayToObject(ed, "cost_ms");
        const int nh = m->n_configs[t->lm_head];
        for (int i = 0; i < m->n_configs[t->embed]; i++)
            cJSON_AddItemToArray(rowsj, cJSON_CreateDoubleArray(&t->t_tie[(size_t)i * nh], nh));
        cJSON_AddItemToArray(edges, ed);
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    int rc = emit(o, s);
    free(s);
    plan_free(p);
    return rc;
}

/* fit's layerwise-fit/1 document: the setting, the pins, and the largest
 * batch per GPU that fits (lo; 0: none, with the smallest peak at batch 1)
 * with the fastest strategy there. */
static char *fit_document(const opts *o, plan *p, long lo, int largest_proven, double limit)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "layerwise-fit/1");
    cJSON_AddStringToObject(root, "network", plan_net(p)->name);
    cJSON_AddStringToObject(root, "cluster", plan_cluster(p)->name);
    cJSON_AddNumberToObject(root, "gpus", plan_gpus(p));
    cJSON_AddStringToObject(root, "optimizer", optimizer_name(plan_memory_settings_of(p)->optimizer));
    cJSON_AddStringToObject(root, "sync", sync_scheme_name(plan_cluster(p)->sync));
    cJSON_AddStringToObject(root, "strategy", o->strategy ? o->strategy : "layer-wise");
    cJSON_AddNumberToObject(root, "memory_limit_bytes", round(limit));
    if (o->n_pins) {
        cJSON *pins = cJSON_AddArrayToObject(root, "pins");
        for (int i = 0; i < plan_net(p)->n_layers; i++) {
            if (plan_pinned(p)[i] < 0) continue;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "layer", plan_net(p)->layers[i].name);
            const config *c = plan_config(p, i, plan_pinned(p)[i]);
            cJSON_AddItemToObject(e, "config", config_to_json(&plan_net(p)->layers[i], c));
            cJSON_AddItemToArray(pins, e);
        }
    }
    if (lo > 0) {
        cJSON_AddNumberToObject(root, "batch_per_gpu", (double)lo);
        cJSON_AddNumberToObject(root, "batch", (double)plan_batch(p));
        cJSON_AddStringToObject(root, "model", "Eq. 1");
        cJSON_AddNumberToObject(root, "total_ms", plan_best_eval(p)->total_ms);
        cJSON_AddNumberToObject(root, "images_per_s", round(plan_best_eval(p)->images_per_s * 10) / 10);
        doc_add_throughput(root, plan_model(p), "eq1", plan_best_eval(p)->total_ms, plan_best_eval(p)->gpus_used);
        cJSON_AddNumberToObject(root, "peak_memory_bytes", round(plan_best_eval(p)->peak_memory_bytes));
        cJSON_AddBoolToObject(root, "proven_optimal", plan_memory_of(p)->proven_optimal);
        cJSON_AddNumberToObject(root, "lower_bound_ms", plan_memory_of(p)->lower_bound_ms);
        cJSON_AddBoolToObject(root, "largest_proven", largest_proven);
    } else {
        cJSON_AddNullToObject(root, "batch_per_gpu");
        cJSON_AddNumberToObject(root, "min_peak_bytes_at_batch_1", round(plan_min_peak(p, 3.0, NULL, NULL)));
    }
    char *doc = cJSON_Print(root);
    cJSON_Delete(root);
    return doc;
}

/* fit -s data|model|owt: every layer pinned to the baseline's config, so
 * that fit asks how large a batch that strategy takes (a baseline's
 * configs at batch 1 per GPU are its configs at any larger batch). */
static int pin_baseline(const opts *o, plan *p, lw_error *err)
{
    if (!o->strategy) return 0;
    int b = baseline_from_name(o->strategy);
    if (b < 0) /* megatron and optimum are not files: say what they are instead */
        return lw_fail(err, 2, "fit -s %s: fit takes a baseline (data, model or owt), not %s", o->strategy,
                       strcmp(o->strategy, "megatron") == 0  ? "Megatron's plan"
                       : strcmp(o->strategy, "optimum") == 0 ? "the optimum (fit without -s searches for it)"
                                                             : "a strategy file");
    if (o->n_pins) return lw_fail(err, 2, "fit -s %s pins every layer: leave out --pin", o->strategy);
    int L = plan_net(p)->n_layers;
    int *ci = lw_malloc(sizeof(int) * (size_t)(L ? L : 1));
    plan_pin *pins = lw_malloc(sizeof(plan_pin) * (size_t)(L ? L : 1));
    strategy_baseline(plan_model(p), (baseline_kind)b, ci);
    for (int i = 0; i < L; i++) pins[i] = (plan_pin){i, ci[i]};
    int rc = plan_apply(p, &(plan_change){.n_pins = L, .pins = pins}, err);
    free(ci);
    free(pins);
    return rc;
}

static int cmd_fit(const opts *o)
{
    lw_error err = {0};
    if (o->set.global_batch || o->set.batch_per_gpu) return bad("%s", "fit chooses the batch: leave out --batch and --batch-per-gpu");
    if (o->mset.limit < 0) return bad("%s", "fit needs a memory limit: leave out --no-memory-limit");
    plan_settings set = o->set;
    set.batch_per_gpu = 1;
    plan *p = open_plan(o, set, &err);
    /* pins hold at every batch tried: a config found at batch 1 per GPU
     * (the global batch is the GPU count) is there at any larger batch */
    if (!p || apply_pins(o, p, &err) != 0 || pin_baseline(o, p, &err) != 0) {
        plan_free(p);
        return die(&err);
    }
    fit_result fr;
    if (fit_largest_batch(p, &fr, &err) != 0) goto fail;
    const long lo = fr.per_gpu, most = fr.most;
    const int found_hi = fr.found_hi, unsettled = fr.unsettled;
    set.batch_per_gpu = lo ? lo : 1;
    if (plan_pin_count(p) != (o->strategy ? plan_net(p)->n_layers : o->n_pins)) {
        lw_fail(&err, 1, "fit: a pin was lost at batch %ld per GPU", set.batch_per_gpu);
        goto fail;
    }
    double limit = plan_memory_limit(plan_memory_settings_of(p), plan_cluster(p));
    if (o->json || o->out) {
        char *doc = fit_document(o, p, lo, !unsettled && found_hi, limit);
        int rc = emit(o, doc);
        free(doc);
        plan_free(p);
        return rc;
    }
    char more[96];
    snprintf(more, sizeof more, " or more (searched up to %ld%s)", most,
             most < 1000000L ? ", the largest global batch the cost model takes" : "");
    if (o->n_pins) printf("with %d layer%s pinned (--pin):\n", o->n_pins, o->n_pins == 1 ? "" : "s");
    if (o->strategy) printf("strategy %s (every layer pinned to it), sync %s:\n", o->strategy, sync_scheme_name(plan_cluster(p)->sync));
    if (lo == 0) {
        char lt[32];
        printf("%s on %s, %d GPUs: nothing fits %s per GPU even at batch 1 per GPU (smallest peak %.2f GiB)\n",
               plan_net(p)->name, plan_cluster(p)->name, plan_gpus(p), limit_text(limit, lt, sizeof lt), plan_min_peak(p, 3.0, NULL, NULL) / 1073741824.0);
    } else {
        printf("%s on %s, %d GPUs, %s state: the largest batch at which a strategy fits %.2f GiB per GPU is %ld per GPU%s\n"
               "(global %ld); the fastest strategy that fits there takes %.2f ms/step (Eq. 1), %.1f images/s, MFU %.1f%%, "
               "peak %.2f GiB\n",
               plan_net(p)->name, plan_cluster(p)->name, plan_gpus(p), optimizer_name(plan_memory_settings_of(p)->optimizer), limit / 1073741824.0, lo,
               !found_hi ? more : unsettled ? " or a little more (some larger batches unsettled)" : "",
               plan_batch(p), plan_best_eval(p)->total_ms, plan_best_eval(p)->images_per_s, plan_best_eval(p)->mfu * 100,
               plan_best_eval(p)->peak_memory_bytes / 1073741824.0);
        if (!plan_memory_of(p)->proven_optimal)
            printf("(the best found in the time limit; none that fits is faster than %.2f ms/step)\n", plan_memory_of(p)->lower_bound_ms);
    }
    plan_free(p);
    return 0;
fail:
    plan_free(p);
    return die(&err);
}

static int cmd_export(const opts *o)
{
    if (!o->out) return bad("%s", "export needs -o FILE.{dot,svg,png,pdf}");
    if (o->out_stdout) return bad("%s", "export -o - (standard output): a diagram's format comes from the file's extension; name a FILE.{dot,svg,png,pdf}");
    int view = o->view ? export_view_from_name(o->view) : VIEW_STRATEGY;
    if (view < 0) return bad("--view \"%s\" must be graph, reduced or strategy", o->view);
    /* a given strategy (-s) is drawn without tables or a search, up to 1024 GPUs */
    int given = o->strategy && strcmp(o->strategy, "optimum") != 0;
    if (given && view == VIEW_REDUCED)
        return bad("%s", "--view reduced draws the search's steps: -s (a given strategy) goes with graph or strategy");
    if (given && (o->n_pins || o->step >= 0 || o->set.no_fold))
        return bad("%s", "-s (a given strategy) takes no --pin, --step or --no-fold: those are the search's");
    if (o->step >= 0 && view != VIEW_REDUCED)
        return bad("--step draws the graph part way through the search: it goes with --view reduced, not %s",
                   export_view_name((export_view)view));
    if (o->pipe.pp > 1 && view != VIEW_STRATEGY)
        return bad("--pp draws the pipeline's stages: it goes with --view strategy, not %s", export_view_name((export_view)view));
    lw_error err = {0};
    int mega_pipe = given && o->pipe.pp > 1; /* -s megatron --pp P: Megatron's equal stages */
    if (mega_pipe && o->mega.sp) return bad("%s", "export -s megatron --pp: --sp is not drawn in a pipeline yet");
    plan *p = open_plan_as(o, o->set, given && !mega_pipe, &err);
    if (!p || apply_pins(o, p, &err) != 0) {
        plan_free(p);
        return die(&err);
    }
    if (o->pipe.pp > 1) { /* the pipeline's stages as clusters (export_dot.c) */
        plan_pipe_settings q = {o->pipe.pp, o->pipe.microbatches, o->pipe.schedule + 1, o->pipe.vp, mega_pipe, o->mega.tp};
        if (plan_apply(p, &(plan_change){.pipe = &q}, &err) != 0) {
            plan_free(p);
            return die(&err);
        }
        given = 0;
    }
    if (!given && o->step > plan_search_result(p)->n_steps) {
        fprintf(stderr, "layerwise: --step %d: the search takes %d steps on this graph\n", o->step, plan_search_result(p)->n_steps);
        plan_free(p);
        return 2;
    }
    int *ci = given ? lw_calloc((size_t)plan_net(p)->n_layers, sizeof(int)) : NULL;
    int rc = given ? strategy_pick_with(p, o->strategy, &o->mega, ci, &err) : 0;
    if (rc == 0) rc = export_diagram(p, (export_view)view, o->step, ci, o->out, &err);
    free(ci);
    plan_free(p);
    if (rc != 0) return die(&err);
    lw_say("wrote %s\n", o->out);
    return 0;
}

/* A profile template: every distinct task shape the search asks t_c about at
 * this setting, with the model's own forward/backward estimates, for the
 * user to replace with measurements on the real GPU. */
static int cmd_profile(const opts *o)
{
    lw_error err = {0};
    /* the configs and their compute times only: no transfer tables, no
     * search (any GPU count evaluation takes, up to 1024) */
    plan *p = open_plan_as(o, o->set, 1, &err);
    if (!p) return die(&err);
    const cost_model *m = plan_model(p);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "layerwise-profile/1");
    cJSON_AddStringToObject(root, "gpu", plan_cluster(p)->gpu.name);
    cJSON_AddStringToObject(root, "precision", precision_name(plan_cluster(p)->precision));
    char note[512];
    snprintf(note, sizeof note,
             "Template written by layerwise for %s on %d GPUs of %s (batch %ld, %s): every task shape the search "
             "considers, with the analytical model's estimates. Replace forward_ms and backward_ms with times "
             "measured on a %s at %s; entries left as they are change nothing.",
             plan_net(p)->name, plan_gpus(p), plan_cluster(p)->name, plan_batch(p), precision_name(plan_cluster(p)->precision), plan_cluster(p)->gpu.name,
             precision_name(plan_cluster(p)->precision));
    cJSON_AddStringToObject(root, "comment", note);
    cJSON *arr = cJSON_AddArrayToObject(root, "entries");
    profile *seen = lw_calloc(1, sizeof *seen); /* the shapes written so far (every config of every layer is looked up) */
    for (int i = 0; i < plan_net(p)->n_layers; i++) {
        const layer *l = &plan_net(p)->layers[i];
        if (l->type == LT_INPUT || l->type == LT_FLATTEN) continue;
        for (int k = 0; k < plan_n_configs(p, i); k++) {
            profile_entry key;
            double f, b;
            cost_t_c_parts(m, i, plan_config(p, i, k), &key, &f, &b);
            if (!profile_add_shape(seen, &key)) continue;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "type", layer_type_name(l->type));
            double in[4], out[4];
            for (int d = 0; d < 4; d++) {
                in[d] = (double)key.in[d];
                out[d] = (double)key.out[d];
            }
            cJSON_AddItemToObject(e, "input", cJSON_CreateDoubleArray(in, 4));
            cJSON_AddItemToObject(e, "output", cJSON_CreateDoubleArray(out, 4));
            if (l->type == LT_ADD || l->type == LT_CONCAT) cJSON_AddNumberToObject(e, "inputs", key.n_inputs);
            if (l->type == LT_CONV2D || l->type == LT_POOL2D) {
                int kk[2] = {key.k[0], key.k[1]}, ss[2] = {key.s[0], key.s[1]}, pp[2] = {key.p[0], key.p[1]};
                cJSON_AddItemToObject(e, "kernel", cJSON_CreateIntArray(kk, 2));
                cJSON_AddItemToObject(e, "stride", cJSON_CreateIntArray(ss, 2));
                cJSON_AddItemToObject(e, "padding", cJSON_CreateIntArray(pp, 2));
            }
            cJSON_AddNumberToObject(e, "forward_ms", f);
            cJSON_AddNumberToObject(e, "backward_ms", b);
            cJSON_AddStringToObject(e, "comment", l->name);
            cJSON_AddItemToArray(arr, e);
        }
    }
    const int n = seen->n;
    profile_free(seen);
    char *doc = cJSON_Print(root);
    cJSON_Delete(root);
    int rc = emit(o, doc);
    if (rc == 0 && o->out) fprintf(stderr, "%d task shapes\n", n);
    free(doc);
    plan_free(p);
    return rc;
}

/* ---- simulate ---- */


static void print_sim_text(const plan *p, const sim_result *s, const char *label)
{
    printf("simulated training step: %s on %s, %d GPU%s, batch %ld (%s), strategy %s, overlap %s\n\n",
           plan_net(p)->name, plan_cluster(p)->name, plan_gpus(p), plan_gpus(p) == 1 ? "" : "s", plan_batch(p), sync_scheme_name(plan_cluster(p)->sync),
           label, sim_overlap_name(s->overlap));
    double tf[2], mfu[2];
    strategy_achieved(plan_model(p), s->step_ms, s->gpus_used, &tf[0], &mfu[0]);
    strategy_achieved(plan_model(p), s->eq1_ms, s->gpus_used, &tf[1], &mfu[1]);
    printf("  simulated step  %10.2f ms  %10.1f images/s  MFU %5.1f%%   (event simulation of the task graph)\n",
           s->step_ms, s->images_per_s, mfu[0] * 100);
    printf("  Eq. 1 estimate  %10.2f ms  %10.1f images/s  MFU %5.1f%%   (the paper's additive cost model)\n", s->eq1_ms,
           s->eq1_ms > 0 ? (double)plan_batch(p) / (s->eq1_ms * 1e-3) : 0, mfu[1] * 100);
    printf("  saved by overlap %9.2f ms  (%.1f%% of Eq. 1)\n", s->eq1_ms - s->step_ms,
           s->eq1_ms > 0 ? 100.0 * (s->eq1_ms - s->step_ms) / s->eq1_ms : 0);
    printf("  model FLOPs     %10.4g per step: %.1f TFLOPS per GPU simulated (MFU: of the %.1f TFLOPS %s dense peak)\n\n",
           strategy_model_flops_per_step(plan_model(p)), tf[0], plan_peak_tflops(p), precision_name(plan_precision(p)));
    printf("busy per GPU (compute, ms and %% of the simulated step):\n");
    for (int g = 0; g < s->gpus; g++)
        printf("  gpu %-3d %9.2f %4.0f%%%s", g, s->res[g].busy_ms,
               s->step_ms > 0 ? 100.0 * s->res[g].busy_ms / s->step_ms : 0, g % 4 == 3 || g + 1 == s->gpus ? "\n" : "");
    int ns = sim_critical_segments(s, NULL, 0);
    sim_segment *seg = lw_malloc(sizeof *seg * (size_t)(ns ? ns : 1));
    sim_critical_segments(s, seg, ns);
    /* by layer: the path's time per layer, in the order the path meets them */
    int L = plan_net(p)->n_layers;
    double *ms = lw_calloc((size_t)L, sizeof(double));
    int *order = lw_malloc(sizeof(int) * (size_t)L), no = 0;
    unsigned *kinds = lw_calloc((size_t)L, sizeof(unsigned));
    for (int i = 0; i < ns; i++) {
        int li = seg[i].layer;
        if (li < 0 || li >= L) continue;
        if (ms[li] == 0 && !kinds[li]) order[no++] = li;
        ms[li] += seg[i].ms;
        kinds[li] |= 1u << seg[i].kind;
    }
    printf("\ncritical path by layer (the chain of tasks that sets the step, waits included; %d layers):\n", no);
    int shown = 0;
    double other = 0;
    for (int i = 0; i < no; i++) {
        int li = order[i];
        if (no > 30 && ms[li] < 0.01 * s->step_ms) {
            other += ms[li];
            continue;
        }
        char kb[96] = "";
        for (int k = 0; k < SIM__KINDS; k++)
            if (kinds[li] & (1u << k)) {
                if (*kb) strncat(kb, ", ", sizeof kb - strlen(kb) - 1);
                strncat(kb, sim_kind_name((sim_kind)k), sizeof kb - strlen(kb) - 1);
            }
        printf("  %-32.32s %9.3f ms  %s\n", plan_net(p)->layers[li].name, ms[li], kb);
        shown++;
    }
    if (shown < no) printf("  (%d more layers under 1%% each: %.3f ms)\n", no - shown, other);
    free(ms);
    free(order);
    free(kinds);
    free(seg);
}

/* simulate's progress: a percentage on stderr when it is a terminal
 * (cleared at the end, as the search's), and the time bound: the run
 * stops once the rate so far projects it, with the JSON document's least
 * time, past the limit (from a second on, or at the limit). */
typedef struct sim_watch {
    int tty;
    double tasks, limit_s, extra_s; /* extra_s: what follows sim_run (the document), at least */
    double spent_s, projected_s, fraction;
} sim_watch;

static int sim_watch_progress(double fraction, double spent_s, double projected_s, void *user)
{
    sim_watch *w = user;
    w->fraction = fraction;
    w->spent_s = spent_s;
    w->projected_s = projected_s;
    if (w->tty) {
        if (fraction < 1.0)
            fprintf(stderr, "\rlayerwise: simulating the step (about %.3g tasks): %3.0f%%", w->tasks, fraction * 100.0);
        else
            fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    int stop = fraction < 1.0 && projected_s + w->extra_s > w->limit_s && (spent_s >= 1.0 || spent_s >= w->limit_s);
    if (stop && w->tty) fputs("\r\033[K", stderr);
    return stop;
}

static int cmd_simulate(const opts *o)
{
    if (o->pipe.pp) return cmd_pipeline(o, o->strategy && strcmp(o->strategy, "megatron") == 0);
    if (o->strategy && strategy_file_has_stages(o->strategy)) return cmd_pipeline(o, 2);
    lw_error err = {0};
    /* a given strategy needs no tables and no search (up to 1024 GPUs) */
    int given = o->strategy && strcmp(o->strategy, "optimum") != 0;
    plan *p = open_plan_as(o, o->set, given, &err);
    if (!p || (!given && apply_pins(o, p, &err) != 0)) { /* the optimum with the pins, as search finds it */
        plan_free(p);
        return die(&err);
    }
    int *ci = lw_calloc((size_t)plan_net(p)->n_layers, sizeof(int));
    const char *label = o->strategy ? o->strategy : "optimum";
    if (strategy_pick_with(p, label, &o->mega, ci, &err) != 0) {
        free(ci);
        plan_free(p);
        return die(&err);
    }
    /* bounded as a search's build is: refused up front where the estimate
     * passes this machine, stopped where the rate seen passes the limit */
    int as_doc = o->json || o->out;
    double extra_b = as_doc ? SIM_JSON_BYTES_PER_TASK : 0, extra_s = as_doc ? SIM_JSON_MIN_S_PER_TASK : 0;
    sim_size z;
    double limit = sim_time_limit_s();
    if (sim_refuse_too_large(plan_model(p), ci, extra_b, extra_s, limit, &z, &err)) {
        free(ci);
        plan_free(p);
        return die(&err);
    }
    sim_watch w = {.tty = isatty(STDERR_FILENO), .tasks = z.tasks, .limit_s = limit, .extra_s = z.tasks * extra_s};
    sim_options so = {.overlap = o->overlap >= 0            ? (sim_overlap)o->overlap
                                 : plan_cluster(p)->stack.given && plan_cluster(p)->stack.overlap >= 0 ? (sim_overlap)plan_cluster(p)->stack.overlap /* the stack's */
                                                             : SIM_OVERLAP_DDP,
                      .progress = sim_watch_progress,
                      .progress_user = &w};
    sim_result *s = sim_run(plan_model(p), ci, &so);
    if (!s) {
        lw_fail(&err, 1,
                "simulating this step of %s on %d GPUs is too large for this machine: about %.3g tasks, %.0f%% done "
                "after %.1f s, would take about %.0f s at the rate so far (the limit is %.0f s, LAYERWISE_MAX_SIM_S); "
                "choose fewer GPUs or a strategy with fewer pieces",
                plan_net(p)->name, plan_gpus(p), z.tasks, w.fraction * 100, w.spent_s, w.projected_s + w.extra_s, limit);
        free(ci);
        plan_free(p);
        return die(&err);
    }
    int rc = 0;
    if (o->trace) {
        if (sim_save_trace(o->trace, s, plan_model(p), &err) != 0) rc = die(&err);
        else if (!o->json && !o->trace_stdout) lw_say("wrote %s\n", o->trace);
    }
    if (rc == 0) {
        if (o->json || o->out) {
            char *doc = sim_to_json(s, plan_model(p), label);
            rc = emit(o, doc);
            free(doc);
        }
        if (!o->json) print_sim_text(p, s, label);
    }
    sim_free(s);
    free(ci);
    plan_free(p);
    return rc;
}

/* diff A B: two strategies side by side (diff.h). Only "optimum" needs
 * the search; baselines and files are evaluated without tables. */
static int cmd_diff(const opts *o)
{
    if (o->diff.n != 2)
        return bad("%s", "diff needs two strategies: optimum, data, model, owt, megatron or a strategy file");
    lw_error err = {0};
    int searched = strcmp(o->diff.name[0], "optimum") == 0 || strcmp(o->diff.name[1], "optimum") == 0;
    if (o->n_pins && !searched) /* the pins shape the optimum alone */
        return bad("--pin %s: diff's pins fix layers of its optimum, and neither A nor B is optimum", o->pins[0]);
    plan *p = open_plan_as(o, o->set, !searched, &err);
    if (!p || apply_pins(o, p, &err) != 0) {
        plan_free(p);
        return die(&err);
    }
    int L = plan_net(p)->n_layers;
    int *ci[2] = {lw_calloc((size_t)L, sizeof(int)), lw_calloc((size_t)L, sizeof(int))};
    strategy_eval ev[2] = {{0}, {0}};
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        if (strategy_pick_with(p, o->diff.name[k], &o->mega, ci[k], &err) != 0) rc = die(&err);
        else strategy_evaluate(plan_model(p), ci[k], &ev[k]);
    }
    if (rc == 0) {
        diff_side a = {o->diff.name[0], ci[0], &ev[0]}, b = {o->diff.name[1], ci[1], &ev[1]};
        if (o->json || o->out) {
            char *doc = diff_json(p, &a, &b);
            rc = emit(o, doc);
            free(doc);
        }
        if (rc == 0 && !o->json) {
            char *text = diff_text(p, &a, &b);
            fputs(text, stdout);
            free(text);
        }
    }
    for (int k = 0; k < 2; k++) {
        strategy_eval_free(&ev[k]);
        free(ci[k]);
    }
    plan_free(p);
    return rc;
}

/* One ring all-reduce over the first G GPUs, in the order the model rings
 * them: what t_s charges per call, and the bus bandwidth nccl-tests would
 * report for it (2(G-1)/G x bytes / time). */
static int cmd_allreduce(const opts *o)
{
    lw_error err = {0};
    cluster *cl = plan_load_cluster(o->cluster, &err);
    if (!cl) return die(&err);
    apply_whatif(o, cl);
    if (settings_apply_stack(cl, o->over.stack, &err) != 0) {
        cluster_free(cl);
        return die(&err);
    }
    int total = cluster_gpus(cl), g = o->set.gpus ? o->set.gpus : cl->gpus_per_node;
    if (g < 2 || g > total) {
        lw_say("layerwise: allreduce needs 2 to %d GPUs of cluster \"%s\"; %d requested\n", total, cl->name, g);
        cluster_free(cl);
        return 2;
    }
    double bytes = o->arg.size > 0 ? o->arg.size : 1e8;
    int *ring = lw_malloc(sizeof(int) * (size_t)g);
    for (int i = 0; i < g; i++) ring[i] = i;
    cost_ring_order(cl, ring, g);
    double t = cost_allreduce_s(cl, ring, g, bytes);
    coll_pick pk = cost_allreduce_call(cl, ring, g, bytes); /* which algorithm and protocol */
    double busbw = 2.0 * (g - 1) / g * bytes / t / 1e9;
    int rc = 0, rings = cost_ring_count(cl, ring, g);
    if (o->json || o->out) { /* -o without --json: the JSON in the file, the line on stdout */
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "cluster", cl->name);
        cJSON_AddNumberToObject(root, "gpus", g);
        cJSON_AddNumberToObject(root, "bytes", bytes);
        cJSON_AddNumberToObject(root, "time_us", t * 1e6);
        cJSON_AddNumberToObject(root, "busbw_gbs", busbw);
        cJSON_AddStringToObject(root, "algorithm", pk.tree ? "tree" : "ring");
        cJSON_AddStringToObject(root, "protocol", coll_proto_name(pk.proto));
        cJSON_AddItemToObject(root, "ring", cJSON_CreateIntArray(ring, g));
        cJSON_AddNumberToObject(root, "rings", rings);
        char *s = cJSON_PrintUnformatted(root);
        rc = emit(o, s);
        free(s);
        cJSON_Delete(root);
    }
    if (rc == 0 && !o->json) {
        char bb[32];
        lw_format_bytes(bytes, bb, sizeof bb);
        printf("%s all-reduce of %s over %d GPUs of %s (%s protocol): %.1f us, bus bandwidth %.1f GB/s\nring:",
               pk.tree ? "tree" : "ring", bb, g, cl->name, coll_proto_name(pk.proto), t * 1e6, busbw);
        for (int i = 0; i < g; i++) printf(" %d", ring[i]);
        if (rings > 1) printf(" (one of %d rings NCCL runs at once over these GPUs' links)", rings);
        printf("\n");
    }
    free(ring);
    cluster_free(cl);
    return rc;
}

static int cmd_info(const opts *o)
{
    return info_command(o->net, o->json, o->out);
}

static int cmd_import(const opts *o)
{
    return import_command(o->arg.operand, o->out, &o->onnx);
}

static int cmd_net(const opts *o)
{
    netgen_family f = (netgen_family)netgen_family_from_name(o->arg.operand);
    netgen_params p;
    lw_error err = {0};
    if (netgen_resolve(f, &o->arg.sizes, &p, &err) != 0) return die(&err);
    network *net = netgen_build(f, &p);
    char *source = netgen_source(f, &p);
    char *doc = netgen_json(net, source);
    int rc = emit(o, doc);
    free(doc);
    free(source);
    net_free(net);
    return rc;
}

static int cmd_list(void)
{
    const char *kinds[3] = {"networks", "clusters", "profiles"};
    for (int k = 0; k < 3; k++) {
        const char *const *names = data_builtin_names(kinds[k]);
        printf("%s:", kinds[k]);
        for (int i = 0; names[i]; i++) printf(" %s", names[i]);
        printf("\n");
    }
    return 0;
}

/* A strategy name that is a file the command reads (not optimum or a
 * baseline), or NULL. */
static const char *strategy_file(const char *name)
{
    return name && strcmp(name, "optimum") != 0 && !strategy_is_builtin(name) ? name : NULL;
}

/* One file a command reads or writes, as the messages name it. */
typedef struct named_file {
    const char *what, *shown, *path; /* path NULL: nothing on disk (a built-in copy) */
} named_file;

static void add_file(named_file *f, int *n, const char *what, const char *shown, const char *path)
{
    f[*n].what = what;
    f[*n].shown = shown;
    f[(*n)++].path = path;
}

/* An output that is one of the command's inputs, or its other output, is
 * refused before any work (exit 2): `search -n my.json -o my.json` would
 * replace the network with a strategy. Files are compared by device and
 * inode, through links and /dev/stdout alike; a terminal or /dev/null may
 * take both. */
static int check_outputs_apart(const opts *o)
{
    named_file in[8], out[3];
    int ni = 0, no = 0;
    char *located[3] = {NULL, NULL, NULL};
    int reads_net = strcmp(o->cmd, "allreduce") != 0 && strcmp(o->cmd, "net") != 0;
    if (reads_net) {
        located[0] = data_locate("networks", o->net);
        add_file(in, &ni, "the network (-n)", o->net, located[0]);
    }
    if (strcmp(o->cmd, "net") != 0) {
        located[1] = data_locate("clusters", o->cluster);
        add_file(in, &ni, "the cluster (-c)", o->cluster, located[1]);
    }
    if (reads_net && o->profile) {
        located[2] = data_locate("profiles", o->profile);
        add_file(in, &ni, "the profile (-p)", o->profile, located[2]);
    }
    if (strcmp(o->cmd, "eval") == 0 || strcmp(o->cmd, "export") == 0 || strcmp(o->cmd, "simulate") == 0) {
        /* eval reads any name that is not a baseline; the others take "optimum" too */
        const char *f = strcmp(o->cmd, "eval") == 0 && o->strategy && !strategy_is_builtin(o->strategy)
                            ? o->strategy
                            : strategy_file(o->strategy);
        if (f) add_file(in, &ni, "the strategy (-s)", f, f);
    }
    if (strcmp(o->cmd, "diff") == 0)
        for (int k = 0; k < o->diff.n; k++)
            if (strategy_file(o->diff.name[k])) add_file(in, &ni, k ? "diff's B" : "diff's A", o->diff.name[k], o->diff.name[k]);
    if (o->out) add_file(out, &no, "-o", o->out_stdout ? "-" : o->out, o->out);
    if (o->trace) add_file(out, &no, "--trace", o->trace_stdout ? "-" : o->trace, o->trace);
    if (o->json && !o->out && o->trace) /* the document goes to standard output */
        add_file(out, &no, "the --json document", "(standard output)", "/dev/stdout");
    lw_error err = {0};
    int rc = 0;
    for (int i = 0; i < no && rc == 0; i++) {
        lw_file_id oid, id;
        if (lw_output_id(out[i].path, &oid) != 0) continue; /* the write reports what is wrong */
        for (int k = 0; k < ni && rc == 0; k++)
            if (in[k].path && lw_input_id(in[k].path, &id) == 0 && lw_same_file(&oid, &id))
                rc = lw_fail(&err, 2, "%s %s: the same file as %s %s, which it would replace; nothing written",
                             out[i].what, out[i].shown, in[k].what, in[k].shown);
        for (int k = i + 1; k < no && rc == 0; k++)
            if (lw_output_id(out[k].path, &id) == 0 && lw_same_file(&oid, &id))
                rc = lw_fail(&err, 2, "%s %s and %s %s are the same file; give each its own; nothing written",
                             out[i].what, out[i].shown, out[k].what, out[k].shown);
    }
    for (int k = 0; k < 3; k++) free(located[k]);
    return rc == 0 ? 0 : die(&err);
}

int cli_main(int argc, char **argv, tui_entry_fn tui)
{
    /* past `ulimit -f` a write fails with EFBIG, which every writer reports
     * (naming the file, removing its temporary), rather than SIGXFSZ ending
     * the program without a word (and, in the TUI, on the alternate screen) */
    signal(SIGXFSZ, SIG_IGN);
    opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc;
    onnx_set_default_options(&o.onnx); /* -n FILE.onnx, wherever a network is loaded */
    if (!o.cmd || strcmp(o.cmd, "tui") == 0) {
        /* every shared option reaches the TUI; those of other commands are refused, not ignored */
        static const char *const not_tui[] = {"--json", "-o",     "--view", "--step", "--steps",
                                              "--size", "--seed", "--tp",   "--sp"};
        const int given[] = {o.json,     o.out != NULL, o.view != NULL, o.step >= 0, o.steps,
                             o.arg.size > 0, o.seed.set,    o.mega.tp > 0,  o.mega.sp};
        for (size_t k = 0; k < sizeof given / sizeof given[0]; k++)
            if (given[k]) return bad("%s is not an option of the TUI", not_tui[k]);
        tui_args a = {o.net, o.cluster, o.profile, o.set, o.over.sync, o.mset, o.over.precision >= 0, o.over.precision,
                      o.over.bucket_mb >= 0, o.over.bucket_mb, o.over.intra_bw, o.over.inter_bw, o.n_pins, o.pins,
                      {o.pipe.pp, o.pipe.microbatches, o.pipe.schedule + 1, o.pipe.vp, 0, 0}};
        return tui(&a);
    }
    lw_stdout_shown(); /* format characters in names never reach a terminal raw (util.h) */
    static const struct {
        const char *name;
        int (*fn)(const opts *);
    } cmds[] = {{"search", cmd_search},   {"eval", cmd_eval},     {"simulate", cmd_simulate}, {"compare", cmd_compare},
                {"scale", cmd_scale},     {"costs", cmd_costs},   {"export", cmd_export},     {"profile", cmd_profile},
                {"fit", cmd_fit}, {"allreduce", cmd_allreduce}, {"diff", cmd_diff},
                {"info", cmd_info},       {"import", cmd_import}, {"net", cmd_net}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        if (strcmp(o.cmd, cmds[i].name) != 0) continue;
        /* an output that cannot be written is refused before any work */
        const char *outs[2] = {o.out, o.trace};
        for (int k = 0; k < 2; k++) {
            lw_error err = {0};
            if (outs[k] && lw_check_output(outs[k], &err) != 0) return die(&err);
        }
        if (check_outputs_apart(&o) != 0) return 2;
        return stdout_status(cmds[i].fn(&o));
    }
    if (o.out && (strcmp(o.cmd, "list") == 0 || strcmp(o.cmd, "help") == 0))
        return bad("-o is not an option of %s: it prints to standard output only", o.cmd);
    if (strcmp(o.cmd, "list") == 0) return stdout_status(cmd_list());
    if (strcmp(o.cmd, "help") == 0) {
        cli_usage_write(stdout);
        return stdout_status(0);
    }
    return bad("unknown command \"%s\"", o.cmd);
}
