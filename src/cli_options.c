#include "cli_options.h"

#include "settings.h"

#include <string.h>

/* ---- the tables ----------------------------------------------------------- */

const cli_command cli_commands[] = {
    {"", "", "the TUI on VGG-16 and the paper's 16-GPU P100 cluster"},
    {"tui", "[-n NET] [-c CLUSTER] [-g GPUS] [the shared options below]",
     "the TUI on any network and cluster, from the what-if the\nshared options give"},
    {"search",
     "-n NET -c CLUSTER [-g GPUS] [--json] [-o FILE] [--steps] [--pin LAYER=CONFIG]\n"
     "[--no-fold] [--why-not LAYER] [--explain LAYER] [--refine [SECONDS]] [--seed N]\n"
     "[--pp P [--microbatches M] [--schedule gpipe|1f1b|interleaved] [--vp V]]",
     "the optimal strategy (the paper's Algorithm 1, with folds)\nwithin the memory limit"},
    {"eval", "-n NET -c CLUSTER [-g GPUS] -s FILE|data|model|owt|megatron [--tp T] [--sp]\n[--pp P [--microbatches M] [--schedule S] [--vp V]] [--json]",
     "a given strategy or baseline under the cost model, no search"},
    {"simulate", "-n NET -c CLUSTER [-g GPUS] [-s optimum|data|model|owt|megatron|FILE]\n[--overlap none|ddp|full] [--json] [--trace FILE.json]",
     "one training step simulated event by event"},
    {"compare", "-n NET -c CLUSTER [-g GPUS] [--tp T] [--sp] [--json]",
     "data, model, OWT, Megatron (transformers) and layer-wise at one\nGPU count"},
    {"diff", "-n NET -c CLUSTER [-g GPUS] A B [--json] [-o FILE]",
     "two strategies side by side, per layer; A and B are\noptimum, data, model, owt, megatron or a strategy file"},
    {"scale", "-n NET -c CLUSTER [--gpus 1,2,4,8,16] [--tp T] [--sp] [--json]\n[--pp P [--microbatches M] [--schedule S] [--vp V]]",
     "the same at several GPU counts, with the speed-up over one GPU"},
    {"costs", "-n NET -c CLUSTER [-g GPUS] --json", "the exact cost tables the search works on"},
    {"export", "-n NET -c CLUSTER [-g GPUS] --view graph|reduced|strategy [--step K] [--no-fold]\n"
               "[-s FILE|data|model|owt|megatron] -o FILE.{dot,svg,png,pdf}",
     "a diagram of the optimum, or with -s a given strategy (graph\nand strategy views; no search, up to 1024 GPUs)"},
    {"profile", "-n NET -c CLUSTER [-g GPUS] [-o FILE]",
     "a profile template: every task shape, to fill with measurements"},
    {"fit", "-n NET -c CLUSTER [-g GPUS] [--pin LAYER=CONFIG | -s data|model|owt] [--json]",
     "the largest per-GPU batch at which some strategy (with the\npins, or the baseline -s names) fits memory"},
    {"allreduce", "-c CLUSTER [-g GPUS] [--size BYTES] [--json]",
     "one ring all-reduce as the model charges it (default:\n100 MB over one node), with its bus bandwidth"},
    {"import", "FILE.onnx [--input-shape NAME=DIMS] [-o NET.json]",
     "an ONNX model as a layerwise network file: shapes inferred,\nconstants folded, ONNX node names kept"},
    {"net", "gpt|llama|bert|vit [--layers L] [--hidden H] [--heads A] [--kv-heads K]\n"
            "[--ffn F] [--seq S] [--vocab V] [--patch P] [--image I] [--classes C] [-o FILE]",
     "a transformer network file (GPT, Llama, BERT or ViT) from its\nsizes; the family's defaults are GPT-2 small, Llama-2-7B,\nBERT-base and ViT-B/16"},
    {"info", "-n NET [--json] [-o FILE]",
     "a network's layers by type, trainable parameters, forward FLOPs\nand activation bytes per sample, and what each layer can split"},
    {"list", "", "the shipped networks and clusters"},
    {"help", "", "this text (as --help)"},
};
const int cli_n_commands = (int)(sizeof cli_commands / sizeof cli_commands[0]);

const cli_option cli_options[] = {
    {"-n", "--network", "NET", "all",
     "a network file (.json, or .onnx imported), or a shipped name\n(default " DEFAULT_NETWORK ")"},
    {NULL, "--input-shape", "NAME=DIMS", "all",
     "an ONNX graph input's shape where the file leaves it symbolic\n(repeatable; e.g. input=1x3x224x224)"},
    {"-c", "--cluster", "CLUSTER", "all", "a cluster file, or a shipped name (default " DEFAULT_CLUSTER ")"},
    {"-g", "--gpus", "N", "all", "GPUs to use: the first N of the cluster (default: all);\nscale takes a list such as 1,2,4,8,16"},
    {NULL, "--batch", "N", "all", "fixed global batch (default: 32 per GPU, as in the paper)"},
    {NULL, "--batch-per-gpu", "N", "all", "per-GPU batch (--batch or this, not both)"},
    {NULL, "--sync", "ps|ring|zero1|zero2|zero3|fsdp|hsdp", "all",
     "parameter server, ring all-reduce, or sharded data parallelism: ZeRO stage 1, 2 or 3 (fsdp = zero3), hsdp "
     "(sharded in a node, replicated across) (default: the cluster's)"},
    {NULL, "--precision", "P", "all",
     "fp32, tf32, fp16 or bf16 (default: the cluster's); fp16/bf16 are\n"
     "mixed precision: 2-byte activations and gradients, fp32 weights"},
    {NULL, "--stack", "NAME", "cli",
     "software stack (data/stacks/: framework, per-step and per-kernel\noverheads, gradient-sync precision, default overlap) in place\nof the cluster's; without one the GPU's constants as fitted"},
    {NULL, "--bucket-mb", "MB", "all",
     "gradient bucket of a ring all-reduce, MiB (default: the cluster's,\n25 like PyTorch DDP); 0: one all-reduce call per layer"},
    {NULL, "--intra-bw", "GB/s", "all", "what-if: bandwidth between GPUs of a node"},
    {NULL, "--inter-bw", "GB/s", "all", "what-if: bandwidth of a node's network link"},
    {"-p", "--profile", "FILE", "all", "measured layer times that override the analytical t_c (refused\nwhen made for another GPU or precision than the run's)"},
    {NULL, "--pin", "L=CONFIG", "all", "force layer L to a config such as \"n4 c2\" in the search (search, fit,\ndiff, simulate's optimum, export, the TUI; repeatable, once per\nlayer; split at the last =: --pin c=1=n4 pins the layer c=1)"},
    {NULL, "--memory-limit", "SIZE", "all",
     "memory per GPU the strategy must fit (e.g. 12GiB, 16000MB; a plain\nnumber is GiB; default: the cluster's GPU memory)"},
    {NULL, "--no-memory-limit", NULL, "all", "the paper's search: memory ignored"},
    {NULL, "--optimizer", "sgd|momentum|adam", "all", "optimizer state in the memory model (default momentum)"},
    {NULL, "--recompute", "none|selective|full", "all",
     "activation recompute of transformer layers (default none): selective\n"
     "recomputes attention's scores, full each block's forward (t_c and memory)"},
    {NULL, "--attention", "flash|standard", "all",
     "attention kernel (default flash): standard keeps and moves the s x s\nscores"},
    {NULL, "--time-limit", "S", "all",
     "time budget of the search under a memory limit (default 30 s); when it\n"
     "runs out, the best fitting strategy found and a proven lower bound"},
    {"-h", "--help", NULL, "all", "this text"},
    {NULL, "--version", NULL, "all", "the version"},
    {NULL, "--json", NULL, "cli", "one JSON document on stdout"},
    {"-o", "--output", "FILE", "cli", "write to FILE (atomically; - is standard output)"},
    {"-s", "--strategy", "S", "eval simulate export fit",
     "the strategy: a strategy file, data, model, owt or megatron\n(simulate: also optimum, the default; fit: a baseline, every\nlayer pinned to it)"},
    {NULL, "--tp", "T", "eval simulate export diff compare scale",
     "Megatron's tensor-parallel degree:\na power of two dividing every attention's heads (default: the\n"
     "GPUs per node, capped by the GPU count, halved until it divides\nthem; compare and scale cap it by each count)"},
    {NULL, "--sp", NULL, "eval simulate export diff compare scale",
     "Megatron with sequence parallelism:\nLayerNorm, dropout and residual adds split by sequence, not replicated"},
    {NULL, "--pp", "P", "search eval simulate compare scale export tui",
     "pipeline parallelism with P stages (search: the optimal cuts,\nGPU groups, micro-batch count and configs; eval -s megatron:\n"
     "Megatron's P equal stages; simulate: either, micro-batch by\nmicro-batch; compare: both beside the rows; scale: a pipeline\n"
     "row per GPU count, or why there is none; export: the\nstages as clusters; tui: opens with the pipeline)"},
    {NULL, "--microbatches", "M", "search eval simulate compare scale export tui",
     "with --pp: M micro-batches (dividing the batch); default: the\nfastest power of two from P to 8P that divides it and fits\n(none fits: doubled until one does)"},
    {NULL, "--schedule", "S", "search eval simulate compare scale export tui", "with --pp: gpipe, 1f1b (default) or interleaved"},
    {NULL, "--vp", "V", "search eval simulate compare scale export tui", "with --schedule interleaved: V virtual stages per GPU group"},
    {NULL, "--steps", NULL, "search", "add the log of the steps (folds, node and edge eliminations)"},
    {NULL, "--no-fold", NULL, "search export",
     "the paper's Algorithm 1 only (node and edge\neliminations); by default a layer with one edge is also\nfolded into its neighbour"},
    {NULL, "--why-not", "LAYER", "search", "every config of LAYER with the best total when forced to it"},
    {NULL, "--explain", "LAYER", "search",
     "why LAYER has its config: its terms against the alternatives, its\n"
     "GPUs and nodes, the bandwidth and batch that would change it"},
    {NULL, "--refine", "[SECONDS]", "search", "then improve it under the step simulator (0.001 to 86400 s, default 10)"},
    {NULL, "--seed", "N", "search", "the seed of --refine's random order (default 1; only with --refine)"},
    {NULL, "--overlap", "none|ddp|full", "simulate",
     "ddp (default): as PyTorch DDP/Horovod run a step:\ngradient buckets in reverse layer order, the last\nbucket and the optimizer step exposed, compute slowed\nwhile an all-reduce shares its GPU; full: every\noverlap the data flow allows; none: Eq. 1's\nschedule, one phase after another"},
    {NULL, "--trace", "FILE.json", "simulate", "also write the step as Chrome trace events"},
    {NULL, "--view", "V", "export", "graph, reduced (the graph after --step K steps) or strategy"},
    {NULL, "--step", "K", "export", "with --view reduced only: the graph after K steps of the search"},
    {NULL, "--size", "BYTES", "allreduce", "the all-reduce's size (default 100 MB)"},
    {NULL, "--layers", "L", "net", "transformer blocks (1 to 1024)"},
    {NULL, "--hidden", "H", "net", "hidden size, the width of the residual stream (1 to 65536)"},
    {NULL, "--heads", "A", "net", "attention heads; H must be divisible by A"},
    {NULL, "--kv-heads", "K", "net", "llama: key/value heads (grouped-query attention; default A);\nA must be divisible by K"},
    {NULL, "--ffn", "F", "net", "the MLP's inner width (default 4H; llama: 2/3 of 4H rounded\nup to a multiple of 256)"},
    {NULL, "--seq", "S", "net", "gpt, llama, bert: sequence length (and learned positions)"},
    {NULL, "--vocab", "V", "net", "gpt, llama, bert: vocabulary size"},
    {NULL, "--patch", "P", "net", "vit: patch side in pixels (default 16)"},
    {NULL, "--image", "I", "net", "vit: image side in pixels, divisible by P (default 224)"},
    {NULL, "--classes", "C", "net", "vit: classes of the linear head (default 1000)"},
};
const int cli_n_options = (int)(sizeof cli_options / sizeof cli_options[0]);

const cli_note cli_environment[] = {
    {"LAYERWISE_DATA",
     "a directory searched first for a bare network, cluster or profile name (NAME is read from "
     "LAYERWISE_DATA/networks/NAME.json and so on); then come ../data and ../share/layerwise beside the "
     "executable, the installed share/layerwise, and the copies built into the program"},
    {"LAYERWISE_THREADS",
     "the number of threads that build cost tables and split large node eliminations (default: one per core, "
     "at most 8)"},
    {"LAYERWISE_MAX_BUILD_S",
     "the longest a cost-table build may be estimated to take before it is refused (default 600 seconds)"},
    {"LAYERWISE_MAX_SIM_S",
     "the longest a simulated step may be estimated or projected to take before simulate refuses or stops it "
     "(default 600 s)"},
    {"LAYERWISE_NO_AVX2", "set to anything but 0: node eliminations use the SSE2 kernel even where the CPU has AVX2 "
                          "(the same results)"},
    {"LAYERWISE_ASCII", "set to anything but 0: the TUI draws with ASCII only, as in a non-UTF-8 locale"},
    {"NO_COLOR", "set and not empty: the TUI draws without colour (bold, reverse and underline carry the meaning)"},
    {"TERM", "the terminal the TUI opens; one that cannot move the cursor (dumb, or unset) is refused"},
    {"HOME", "what a leading ~ in a path typed in the TUI stands for"},
};
const int cli_n_environment = (int)(sizeof cli_environment / sizeof cli_environment[0]);

const cli_note cli_exit_statuses[] = {
    {"0", "success"},
    {"1", "a failure other than bad input: a file that cannot be written (standard output included), a setting too "
          "large for this machine, a terminal the TUI cannot use"},
    {"2", "bad input or usage: an unknown option or command, a value out of range, a file that does not load (the "
          "message names the file and the line and column, or the layer); nothing is written"},
    {"128+N", "the TUI, interrupted by signal N (SIGINT, SIGTERM, SIGHUP), after giving the terminal back; any "
              "command killed by a signal during a write removes its temporary file first"},
};
const int cli_n_exit_statuses = (int)(sizeof cli_exit_statuses / sizeof cli_exit_statuses[0]);

/* ---- --help ----------------------------------------------------------------- */

/* s up to the next '\n' (or its end), then a newline */
static const char *put_line(FILE *f, const char *s)
{
    size_t n = strcspn(s, "\n");
    fwrite(s, 1, n, f);
    fputc('\n', f);
    return s[n] ? s + n + 1 : s + n;
}

/* Each line of text, every line but the first after `indent` spaces. */
static void put_lines(FILE *f, const char *text, int indent)
{
    const char *s = put_line(f, text);
    while (*s) {
        fprintf(f, "%*s", indent, "");
        s = put_line(f, s);
    }
}

/* "  layerwise NAME SYNOPSIS", its lines after the first at column 20, and
 * the summary at column 37: on the same line where the command has no
 * synopsis, else on the lines below. */
static void usage_command(FILE *f, const cli_command *c)
{
    enum { SYN = 20, SUM = 37 };
    int w = fprintf(f, "  layerwise %-7s", c->name);
    if (c->synopsis[0]) {
        fputc(' ', f);
        put_lines(f, c->synopsis, SYN);
        fprintf(f, "%*s", SUM, "");
    } else {
        fprintf(f, "%*s", SUM - w, "");
    }
    put_lines(f, c->summary, SUM);
}

static int is_shared(const cli_option *o)
{
    return strcmp(o->commands, "all") == 0;
}

static void usage_option(FILE *f, const cli_option *o)
{
    enum { HELP = 24 };
    int w = o->short_name ? fprintf(f, "  %s, %s", o->short_name, o->long_name) : fprintf(f, "      %s", o->long_name);
    if (o->arg) w += fprintf(f, " %s", o->arg);
    fprintf(f, "%*s", w < HELP ? HELP - w : 2, "");
    if (strcmp(o->commands, "all") != 0 && strcmp(o->commands, "cli") != 0) {
        for (const char *c = o->commands; *c;) {
            size_t n = strcspn(c, " ");
            fprintf(f, "%.*s%s", (int)n, c, c[n] ? ", " : ": ");
            c += n + (c[n] != 0);
        }
    }
    put_lines(f, o->help, HELP);
}

void cli_usage_write(FILE *f)
{
    fputs("layerwise " LW_VERSION " — layer-wise parallelization of training, CNNs and transformers (Jia et al., ICML 2018)\n"
          "\n"
          "usage:\n",
          f);
    for (int i = 0; i < cli_n_commands; i++)
        if (strcmp(cli_commands[i].name, "help") != 0) usage_command(f, &cli_commands[i]);
    fputs("\noptions (every command, the TUI's too; a command refuses one it would ignore: net, info,\n"
          "import and list take no cluster, GPU, batch, precision or memory option, allreduce no network):\n",
          f);
    for (int i = 0; i < cli_n_options; i++)
        if (is_shared(&cli_options[i])) usage_option(f, &cli_options[i]);
    fputs("\noptions of every command but the TUI:\n", f);
    for (int i = 0; i < cli_n_options; i++)
        if (strcmp(cli_options[i].commands, "cli") == 0) usage_option(f, &cli_options[i]);
    fputs("\noptions of some commands (named first):\n", f);
    for (int i = 0; i < cli_n_options; i++)
        if (!is_shared(&cli_options[i]) && strcmp(cli_options[i].commands, "cli") != 0)
            usage_option(f, &cli_options[i]);
    fputs("\nExit status: 0 success, 2 bad input (message names the file and place), 1 other failure.\n"
          "The manual: man layerwise (environment, files, examples).\n",
          f);
}

/* ---- the man page ------------------------------------------------------------ */

#ifndef LW_DOCDIR
#define LW_DOCDIR "/usr/local/share/doc/layerwise"
#endif
#ifndef LW_DATADIR
#define LW_DATADIR "/usr/local/share/layerwise"
#endif

/* Text for roff: backslashes and hyphens escaped, a line break joined by a
 * space, a control character at the start of a line made text, and UTF-8
 * as \[uXXXX] so the page is ASCII. */
static void roff(FILE *f, const char *s)
{
    int bol = 1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (bol && (*p == '.' || *p == '\'')) fputs("\\&", f);
        bol = 0;
        if (*p == '\\') fputs("\\e", f);
        else if (*p == '-') fputs("\\-", f);
        else if (*p == '\n') fputc(' ', f);
        else if (*p >= 0xc0) {
            int n = *p >= 0xf0 ? 3 : *p >= 0xe0 ? 2 : 1;
            unsigned cp = *p & (0x3f >> n);
            for (int k = 0; k < n && (p[1] & 0xc0) == 0x80; k++) cp = cp << 6 | (*++p & 0x3f);
            fprintf(f, "\\[u%04X]", cp);
        } else if (*p < 0x80) fputc(*p, f);
    }
}

/* A paragraph of prose given with roff's own escapes (\fB, \-) already in. */
static void para(FILE *f, const char *roff_text)
{
    fprintf(f, ".PP\n%s\n", roff_text);
}

static void man_synopsis(FILE *f)
{
    fputs(".SH SYNOPSIS\n.nh\n.in +4n\n", f);
    for (int i = 0; i < cli_n_commands; i++) {
        const cli_command *c = &cli_commands[i];
        fputs(".ti -4n\n\\fBlayerwise", f);
        if (c->name[0]) fprintf(f, " %s", c->name);
        fputs("\\fR", f);
        if (c->synopsis[0]) {
            fputc(' ', f);
            roff(f, c->synopsis);
        }
        fputs("\n.br\n", f);
    }
    fputs(".in\n.hy\n", f);
}

static void man_commands(FILE *f)
{
    fputs(".SH COMMANDS\n", f);
    for (int i = 0; i < cli_n_commands; i++) {
        fputs(".TP\n.B layerwise", f);
        if (cli_commands[i].name[0]) fprintf(f, " %s", cli_commands[i].name);
        fputc('\n', f);
        roff(f, cli_commands[i].summary);
        fputs(".\n", f);
    }
}

static void man_option(FILE *f, const cli_option *o)
{
    fputs(".TP\n", f);
    if (o->short_name) {
        fputs("\\fB", f);
        roff(f, o->short_name);
        fputs("\\fR, ", f);
    }
    fputs("\\fB", f);
    roff(f, o->long_name);
    fputs("\\fR", f);
    if (o->arg) {
        fputs(" \\fI", f);
        roff(f, o->arg);
        fputs("\\fR", f);
    }
    fputc('\n', f);
    roff(f, o->help);
    fputs(".\n", f);
    if (strcmp(o->commands, "cli") == 0) fputs(".br\nTaken by every command but the TUI.\n", f);
    else if (strcmp(o->commands, "all") != 0) {
        fputs(".br\nTaken by: ", f);
        for (const char *c = o->commands; *c;) {
            size_t n = strcspn(c, " ");
            fprintf(f, "\\fB%.*s\\fR%s", (int)n, c, c[n] ? ", " : ".\n");
            c += n + (c[n] != 0);
        }
    }
}

static void man_options(FILE *f)
{
    fputs(".SH OPTIONS\n", f);
    para(f, "NET and CLUSTER take a file path or a shipped name (\\fBlayerwise list\\fR). "
            "An option takes its value as the next argument.");
    fputs(".SS Options of every command (the TUI's too)\n", f);
    para(f, "A command refuses an option it would ignore (exit 2): \\fBnet\\fR, \\fBinfo\\fR, \\fBimport\\fR "
            "and \\fBlist\\fR take none of the cluster, GPU, batch, precision, sync or memory options; "
            "\\fBallreduce\\fR takes no network, batch, precision, sync or memory option.");
    for (int i = 0; i < cli_n_options; i++)
        if (is_shared(&cli_options[i])) man_option(f, &cli_options[i]);
    fputs(".SS Options of some commands\n", f);
    for (int i = 0; i < cli_n_options; i++)
        if (!is_shared(&cli_options[i])) man_option(f, &cli_options[i]);
}

static void man_notes(FILE *f, const char *section, const cli_note *notes, int n)
{
    fprintf(f, ".SH %s\n", section);
    for (int i = 0; i < n; i++) {
        fputs(".TP\n.B ", f);
        roff(f, notes[i].name);
        fputc('\n', f);
        roff(f, notes[i].text);
        fputs(".\n", f);
    }
}

static void man_files(FILE *f)
{
    fputs(".SH FILES\n", f);
    para(f, "Every file is JSON with a \\fB\"format\"\\fR field; a loader error names the file, the line and "
            "column (or the layer) and what is wrong, and exits with status 2. The formats in full, with "
            "examples: \\fI" LW_DOCDIR "/formats.md\\fR.");
    static const char *const files[][2] = {
        {"networks/NAME.json", "a network (\\fBlayerwise\\-net/1\\fR): an input and layers (conv2d, pool2d, linear, "
                               "flatten, concat, add, softmax, relu, batchnorm, dropout), each naming its inputs."},
        {"clusters/NAME.json", "a cluster (\\fBlayerwise\\-cluster/1\\fR): nodes, GPUs per node, the GPU's "
                               "constants per precision, intra- and inter-node links, per-pair link overrides, "
                               "the sync scheme; every shipped constant names its source."},
        {"stacks/NAME.json", "a software stack (\\fBlayerwise\\-stack/1\\fR, \\fB\\-\\-stack\\fR): framework, "
                             "version, per-kernel and per-step overheads, GEMM efficiency scale per precision, "
                             "gradient-sync precision, default overlap; a cluster may hold one as its \\fB\"stack\"\\fR block."},
        {"strategy files", "a strategy (\\fBlayerwise\\-strategy/1\\fR): what \\fBsearch \\-\\-json\\fR and "
                           "\\fBsearch \\-o\\fR write and \\fBeval \\-s\\fR reads; a config per layer, with its times."},
        {"profiles", "measured forward and backward times per task shape (\\fBlayerwise\\-profile/1\\fR), read by "
                     "\\fB\\-p\\fR; \\fBlayerwise profile\\fR writes the template."},
        {"cost tables", "\\fBcosts \\-\\-json\\fR (\\fBlayerwise\\-costs/1\\fR): per layer t_c + t_s for each "
                        "config, per edge the t_x matrix; the search returns their exact minimum."},
        {"simulations", "\\fBsimulate \\-\\-json\\fR (\\fBlayerwise\\-sim/1\\fR): the simulated step, per GPU busy "
                        "time, the critical path and every task."},
        {"traces", "\\fBsimulate \\-\\-trace FILE.json\\fR: Chrome trace events (microseconds; a process per "
                   "cluster node, a track per GPU, link and NIC) for Perfetto or chrome://tracing."},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) fprintf(f, ".TP\n.I %s\n%s\n", files[i][0], files[i][1]);
    para(f, "Shipped networks and clusters are built into the program and installed under \\fI" LW_DATADIR
            "\\fR (networks/, clusters/, published/); a bare name is looked up as \\fBLAYERWISE_DATA\\fR "
            "(below) says. An output file (\\fB\\-o\\fR) is written to a temporary beside it and renamed, so it is "
            "never left half-written.");
}

static void man_examples(FILE *f)
{
    static const char *const ex[][2] = {
        {"The optimal strategy for VGG\\-16 on 4 of the paper's P100s, as a table:",
         "layerwise search \\-n vgg16 \\-c p100\\-4x4 \\-g 4"},
        {"Why fc6 splits by channel on 16 GPUs, term by term:", "layerwise search \\-n vgg16 \\-c p100\\-4x4 \\-g 16 "
                                                                 "\\-\\-explain fc6"},
        {"Save the optimum, then evaluate it with a faster network link:",
         "layerwise search \\-n resnet50 \\-c p100\\-4x4 \\-g 16 \\-o best.json\n"
         "layerwise eval \\-n resnet50 \\-c p100\\-4x4 \\-g 16 \\-s best.json \\-\\-inter\\-bw 23"},
        {"Throughput of the four strategies from 1 to 16 GPUs:",
         "layerwise scale \\-n alexnet \\-c p100\\-4x4 \\-\\-gpus 1,2,4,8,16"},
        {"One simulated step, as a trace for Perfetto:",
         "layerwise simulate \\-n inception_v3 \\-c dgx\\-a100 \\-\\-trace step.json"},
        {"A diagram of which GPU computes what:",
         "layerwise export \\-n vgg16 \\-c p100\\-4x4 \\-g 16 \\-\\-view strategy \\-o strategy.svg"},
        {"The TUI on another setting, with half the GPU memory:",
         "layerwise tui \\-n inception_v3 \\-c dgx\\-a100 \\-g 8 \\-\\-memory\\-limit 40GiB"},
    };
    fputs(".SH EXAMPLES\n", f);
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++)
        fprintf(f, ".PP\n%s\n.PP\n.RS 4\n.nf\n%s\n.fi\n.RE\n", ex[i][0], ex[i][1]);
}

void cli_man_write(FILE *f)
{
    fputs(".\\\" layerwise(1): generated by src/cli_options.c from the option table; do not edit.\n"
          ".TH LAYERWISE 1 \"\" \"layerwise " LW_VERSION "\" \"User Commands\"\n"
          ".SH NAME\n"
          "layerwise \\- find and explain layer\\-wise parallelization strategies for training neural networks "
          "on many GPUs\n",
          f);
    man_synopsis(f);
    fputs(".SH DESCRIPTION\n", f);
    para(f, "\\fBlayerwise\\fR implements the method of Z. Jia, S. Lin, C. R. Qi and A. Aiken, "
            "\\fIExploring Hidden Dimensions in Parallelizing Convolutional Neural Networks\\fR (ICML 2018): "
            "every layer may split its output along the sample, channel, height and width dimensions with its "
            "own degrees; a cost model estimates each layer's compute (t_c), the transfers between layers (t_x) "
            "and the synchronisation of weights (t_s); node and edge eliminations find the strategy that "
            "minimises their sum, exactly.");
    para(f, "With no command it opens a terminal UI (press \\fB?\\fR there for its keys) that shows the graph, "
            "the eliminations step by step, per-layer time tables and what-if changes. The commands below do the "
            "same from scripts: text output is a readable table, \\fB\\-\\-json\\fR prints one JSON document on "
            "standard output, errors go to standard error.");
    man_commands(f);
    man_options(f);
    man_files(f);
    man_notes(f, "ENVIRONMENT", cli_environment, cli_n_environment);
    man_notes(f, "EXIT STATUS", cli_exit_statuses, cli_n_exit_statuses);
    man_examples(f);
    fputs(".SH SEE ALSO\n", f);
    para(f, "\\fBdot\\fR(1); the manual's pages in \\fI" LW_DOCDIR "\\fR: tui.md (the TUI), cli.md (the commands "
            "at length), formats.md, transformers.md (transformers, FSDP and ZeRO, pipelines), cost\\-model.md, search.md, reproduce.md (the paper's figures), calibration.md, "
            "performance.md, safety.md, development.md; the README in the source tree is the way in.");
}

#ifdef LW_CLI_OPTIONS_MAIN
/* The generator the Makefile builds: the man page on stdout, or with an
 * argument the tables for tests/doc_test.sh. */
int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "--man";
    if (strcmp(what, "--man") == 0) cli_man_write(stdout);
    else if (strcmp(what, "--usage") == 0) cli_usage_write(stdout);
    else if (strcmp(what, "--options") == 0)
        for (int i = 0; i < cli_n_options; i++)
            printf("%s\t%s\t%s\t%s\n", cli_options[i].short_name ? cli_options[i].short_name : "-",
                   cli_options[i].long_name, cli_options[i].arg ? cli_options[i].arg : "-", cli_options[i].commands);
    else if (strcmp(what, "--commands") == 0)
        for (int i = 0; i < cli_n_commands; i++) printf("%s\n", cli_commands[i].name);
    else if (strcmp(what, "--environment") == 0)
        for (int i = 0; i < cli_n_environment; i++) printf("%s\n", cli_environment[i].name);
    else {
        fprintf(stderr, "usage: %s [--man|--usage|--options|--commands|--environment]\n", argv[0]);
        return 2;
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
#endif
