/*
 * test_names: hostile names (issue 31 #12). A NUL (\u0000) in any name is
 * refused by the loaders with file and place; format characters (Unicode
 * Cf: U+202E RIGHT-TO-LEFT OVERRIDE, U+200D ZERO WIDTH JOINER, ...; and
 * U+2028, U+2029) are never shown raw: not in messages, not through the
 * CLI's stdout on a terminal, not on the TUI's screen, not in SVG or DOT.
 */
#include "cluster.h"
#include "export_dot.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "json_util.h"
#include "net_json.h"
#include "plan.h"
#include "profile.h"
#include "strategy.h"
#include "util.h"

#include "tui_screen.h"

#include <fcntl.h>

static const char RLO[] = "\xE2\x80\xAE", ZWJ[] = "\xE2\x80\x8D", LSEP[] = "\xE2\x80\xA8";

static char *file_text(const char *path)
{
    lw_error e = {0};
    size_t n;
    char *s = lw_read_file(path, &n, &e);
    cr_assert_not_null(s, "%s", e.msg);
    return s;
}

/* text with the first `from` replaced by `to` (every one if all) */
static char *replaced(const char *text, const char *from, const char *to, int all)
{
    lw_buf b = {0};
    const char *p = text, *q;
    while ((q = strstr(p, from))) {
        lw_buf_append(&b, p, (size_t)(q - p));
        lw_buf_printf(&b, "%s", to);
        p = q + strlen(from);
        if (!all) break;
    }
    lw_buf_printf(&b, "%s", p);
    return b.s;
}

static int has_raw_format(const char *s)
{
    for (; *s; s++)
        if (lw_text_format_at(s, NULL)) return 1;
    return 0;
}

/* ---------- NUL: refused where it is written */

static void refused_nul(const char *what, const char *err_msg, const char *label)
{
    cr_assert(strstr(err_msg, label) && strstr(err_msg, "\\u0000 (NUL)"), "%s: %s", what, err_msg);
    /* file:line:col */
    const char *p = strstr(err_msg, label) + strlen(label);
    int line = 0, col = 0;
    cr_assert(sscanf(p, ":%d:%d:", &line, &col) == 2 && line > 0 && col > 0, "%s: no place: %s", what, err_msg);
}

Test(names, nul_in_network_and_layer_names)
{
    char *net = file_text("data/networks/lenet5.json");
    const char *cases[][2] = {{"\"conv1\"", "\"conv1\\u0000hidden\""}, {"\"name\": \"lenet5\"", "\"name\": \"x\\u0000y\""}};
    for (int i = 0; i < 2; i++) {
        char *t = replaced(net, cases[i][0], cases[i][1], 1);
        lw_error err = {0};
        network *n = net_from_json(t, strlen(t), "nul.json", &err);
        cr_assert_null(n, "case %d loaded", i);
        cr_assert_eq(err.code, 2);
        refused_nul("network", err.msg, "nul.json");
        free(t);
    }
    /* "\\u0000" is a backslash and text, not a NUL: still a name (an odd one) */
    char *t = replaced(net, "\"conv1\"", "\"conv1\\\\u0000\"", 1);
    lw_error err = {0};
    network *n = net_from_json(t, strlen(t), "ok.json", &err);
    cr_assert(n || !strstr(err.msg, "NUL"), "%s", err.msg);
    net_free(n);
    free(t);
    free(net);
}

Test(names, nul_in_cluster_gpu_and_strategy_names)
{
    char *cl = file_text("data/clusters/p100-4x4.json");
    const char *cases[][2] = {{"\"name\": \"p100-4x4\"", "\"name\": \"p100\\u0000x\""},
                              {"\"name\": \"Tesla P100-SXM2-16GB\"", "\"name\": \"Tesla\\u0000x\""}};
    for (int i = 0; i < 2; i++) {
        char *t = replaced(cl, cases[i][0], cases[i][1], 0);
        lw_error err = {0};
        cluster *c = cluster_from_json(t, strlen(t), "nulc.json", &err);
        cr_assert_null(c, "case %d loaded", i);
        refused_nul("cluster", err.msg, "nulc.json");
        free(t);
    }
    free(cl);
    char *st = file_text("tests/fixtures/strategies/lenet5_mixed.json");
    char *t = replaced(st, "\"name\": \"conv1\"", "\"name\": \"conv1\\u0000x\"", 0);
    lw_error err = {0};
    cr_assert_null(json_parse_doc(t, strlen(t), "nuls.json", &err));
    refused_nul("strategy", err.msg, "nuls.json");
    free(t);
    free(st);
}

/* ---------- format characters: escaped wherever shown */

Test(names, format_characters_escaped_in_text)
{
    cr_assert(lw_is_format_char(0x202E) && lw_is_format_char(0x200D) && lw_is_format_char(0x2028) &&
              lw_is_format_char(0x2029) && lw_is_format_char(0xFEFF) && lw_is_format_char(0xE0001) &&
              lw_is_format_char(0x00AD) && lw_is_format_char(0x2066));
    cr_assert(!lw_is_format_char('a') && !lw_is_format_char(0xE9) && !lw_is_format_char(0x4E2D) &&
              !lw_is_format_char(0x2030));
    lw_buf b = {0};
    lw_text_shown(&b, "a\xE2\x80\xAE" "b\xF3\xA0\x80\x81" "c");
    cr_assert_str_eq(b.s, "a\\u202Eb\\uDB40\\uDC01c");
    lw_buf_free(&b);
    lw_text_printable(&b, "x\033[31m\xE2\x80\x8Dy");
    cr_assert_str_eq(b.s, "x\\x1B[31m\\u200Dy");
    lw_buf_free(&b);
}

/* The stream the CLI puts on a terminal: a character cut between two
 * writes is escaped whole. */
Test(names, shown_stream_escapes_across_writes)
{
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    FILE *f = lw_shown_stream(fd[1]);
    setvbuf(f, NULL, _IONBF, 0);
    fputs("name \xE2", f);
    fputs("\x80\xAE", f);
    fputs("! \xE2\x80\xA8 done \xC3\xA9\n", f);
    cr_assert_eq(fclose(f), 0);
    close(fd[1]);
    char got[256] = {0};
    ssize_t n = read(fd[0], got, sizeof got - 1);
    close(fd[0]);
    cr_assert(n > 0);
    cr_assert_str_eq(got, "name \\u202E! \\u2028 done \xC3\xA9\n");
}

/* The TUI: what reaches the screen is the escaped form, in every cell,
 * also where it is cut to fit. */
static void assert_no_raw_cell(void)
{
    for (int y = 0; y < LINES; y++)
        for (int x = 0; x < COLS; x++) {
            cchar_t cc;
            if (mvwin_wch(stdscr, y, x, &cc) == ERR) continue;
            wchar_t wc[CCHARW_MAX + 1];
            attr_t at;
            short pair;
            getcchar(&cc, wc, &at, &pair, NULL);
            for (int k = 0; k < CCHARW_MAX && wc[k]; k++)
                cr_assert(!lw_is_format_char((unsigned)wc[k]), "U+%04X raw at row %d col %d:\n%s", (unsigned)wc[k], y,
                          x, dump());
        }
}

Test(names, tui_draws_format_characters_escaped)
{
    term_open(24, 80, 1);
    char name[64];
    snprintf(name, sizeof name, "conv1%sevil%s%s", RLO, ZWJ, LSEP);
    ui_put(stdscr, 1, 0, 60, 0, name);
    char buf[64];
    ui_put(stdscr, 2, 0, 60, 0, ui_fit(name, 12, buf, sizeof buf));
    ui_put(stdscr, 3, 0, 60, 0, ui_fit_mid(name, 14, buf, sizeof buf));
    rect r = {4, 0, 20, 3};
    ui_wrap(stdscr, r, 0, name);
    cr_assert_str_eq(row(1), "conv1\\u202Eevil\\u200D\\u2028");
    cr_assert_eq(ui_width(name), (int)strlen("conv1\\u202Eevil\\u200D\\u2028"));
    assert_no_raw_cell();
    term_close();
}

/* A whole screen: the table of a network whose layer is named with them. */
Test(names, tui_table_of_a_bidi_network)
{
    char *net = file_text("data/networks/lenet5.json");
    char *t = replaced(net, "\"conv1\"", "\"conv1\\u202Eevil\"", 1);
    char path[] = "/tmp/lw_bidi_XXXXXX.json";
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, t, strlen(t)), (ssize_t)strlen(t));
    close(fd);
    term_open(30, 120, 1);
    app *a = open_app(path, "p100-4x4", 4);
    draw(a);
    cr_assert(find_row("2Eevil") >= 0, "%s", dump()); /* cut in the middle to fit: the escape is what is cut */
    assert_no_raw_cell();
    app_free(a);
    term_close();
    unlink(path);
    free(t);
    free(net);
}

/* SVG (Graphviz) and DOT: labels, IDs and tooltips hold the escape. */
Test(names, export_escapes_format_characters)
{
    char *net = file_text("data/networks/lenet5.json");
    char *t = replaced(net, "\"conv1\"", "\"conv1\\u202Eevil\"", 1);
    lw_error err = {0};
    network *n = net_from_json(t, strlen(t), "bidi.json", &err);
    cr_assert_not_null(n, "%s", err.msg);
    cluster *c = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(c, "%s", err.msg);
    plan_settings set = {.gpus = 4};
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = set}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    const char *files[] = {"/tmp/lw_bidi_export.svg", "/tmp/lw_bidi_export.dot"};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(export_diagram(p, VIEW_GRAPH, -1, NULL, files[i], &err), 0, "%s", err.msg);
        char *out = file_text(files[i]);
        cr_assert(strstr(out, "conv1\\u202Eevil"), "%s: no escape", files[i]);
        cr_assert(!has_raw_format(out), "%s: a raw format character", files[i]);
        free(out);
        unlink(files[i]);
    }
    plan_free(p);
    free(t);
    free(net);
}
