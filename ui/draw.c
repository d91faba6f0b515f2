/* draw: styles, glyphs and clipped text output shared by every screen. */
#include "draw.h"

#include <langinfo.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* fg/bg -1 means the terminal's default; mono is what the style becomes
 * without colours, and extra is added to the colour pair (bold etc.). */
typedef struct style_def {
    short fg, bg;
    attr_t mono, extra;
} style_def;

static const style_def style_defs[ST__COUNT] = {
    [ST_NORMAL] = {-1, -1, A_NORMAL, A_NORMAL},
    [ST_TITLE] = {COLOR_WHITE, COLOR_BLUE, A_REVERSE, A_NORMAL},
    [ST_TAB_ACTIVE] = {COLOR_BLACK, COLOR_CYAN, A_BOLD, A_BOLD},
    [ST_CONTEXT] = {COLOR_CYAN, -1, A_NORMAL, A_NORMAL},
    [ST_HINT] = {COLOR_BLACK, COLOR_CYAN, A_REVERSE, A_NORMAL},
    [ST_HINT_KEY] = {COLOR_WHITE, COLOR_BLUE, A_BOLD, A_BOLD},
    [ST_STATUS] = {-1, -1, A_NORMAL, A_NORMAL},
    [ST_ERROR] = {COLOR_RED, -1, A_BOLD | A_UNDERLINE, A_BOLD},
    [ST_HEADER] = {COLOR_BLACK, COLOR_GREEN, A_BOLD | A_UNDERLINE, A_NORMAL},
    [ST_SELECTED] = {COLOR_BLACK, COLOR_YELLOW, A_REVERSE, A_NORMAL},
    [ST_PINNED] = {COLOR_MAGENTA, -1, A_BOLD, A_BOLD},
    [ST_CHANGED] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
    [ST_DIM] = {-1, -1, A_DIM, A_DIM},
    [ST_BOLD] = {-1, -1, A_BOLD, A_BOLD},
    [ST_GOOD] = {COLOR_GREEN, -1, A_BOLD, A_BOLD},
    [ST_BAD] = {COLOR_RED, -1, A_NORMAL, A_NORMAL},
    [ST_COMPUTE] = {COLOR_GREEN, -1, A_NORMAL, A_NORMAL},
    [ST_SYNC] = {COLOR_YELLOW, -1, A_NORMAL, A_NORMAL},
    [ST_TRANSFER] = {COLOR_RED, -1, A_NORMAL, A_NORMAL},
    [ST_EDGE] = {-1, -1, A_NORMAL, A_NORMAL},
    [ST_EDGE_HI] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
    [ST_NODE_HI] = {COLOR_YELLOW, -1, A_BOLD | A_UNDERLINE, A_BOLD},
    [ST_NEXT] = {-1, -1, A_REVERSE, A_REVERSE},
    /* config classes: the colour is palette.h's (ui_styles_init); without
     * colour each class has an attribute of its own */
    [ST_CLASS0 + SPLIT_N] = {0, -1, A_BOLD, A_NORMAL},
    [ST_CLASS0 + SPLIT_C] = {0, -1, A_UNDERLINE, A_NORMAL},
    [ST_CLASS0 + SPLIT_HW] = {0, -1, A_ITALIC, A_NORMAL},
    [ST_CLASS0 + SPLIT_MIXED] = {0, -1, A_BOLD | A_UNDERLINE, A_NORMAL},
    [ST_CLASS0 + SPLIT_ONE] = {0, -1, A_DIM, A_NORMAL},
    [ST_CLASS0 + SPLIT_R] = {0, -1, A_ITALIC | A_BOLD, A_NORMAL},
    [ST_CLASS0 + SPLIT_X] = {0, -1, A_ITALIC | A_UNDERLINE, A_NORMAL},
    /* series: data, model, owt, layer-wise, pipeline */
    [ST_SERIES0 + 0] = {COLOR_BLUE, -1, A_NORMAL, A_BOLD},
    [ST_SERIES0 + 1] = {COLOR_MAGENTA, -1, A_NORMAL, A_NORMAL},
    [ST_SERIES0 + 2] = {COLOR_YELLOW, -1, A_NORMAL, A_NORMAL},
    [ST_SERIES0 + 3] = {COLOR_GREEN, -1, A_BOLD, A_BOLD},
    [ST_SERIES0 + 4] = {COLOR_CYAN, -1, A_NORMAL, A_UNDERLINE},
    /* simulated task kinds: the colour is palette.h's (ui_styles_init), as
     * the exported timeline's; without colour their letters tell them apart */
    [ST_KIND0 + 0] = {0, -1, A_NORMAL, A_NORMAL}, [ST_KIND0 + 1] = {0, -1, A_NORMAL, A_NORMAL},
    [ST_KIND0 + 2] = {0, -1, A_NORMAL, A_NORMAL}, [ST_KIND0 + 3] = {0, -1, A_NORMAL, A_NORMAL},
    [ST_KIND0 + 4] = {0, -1, A_NORMAL, A_NORMAL}, [ST_KIND0 + 5] = {0, -1, A_NORMAL, A_NORMAL},
    [ST_KIND0 + 6] = {0, -1, A_NORMAL, A_NORMAL}, [ST_KIND0 + 7] = {0, -1, A_NORMAL, A_NORMAL},
    [ST_KIND0 + 8] = {0, -1, A_NORMAL, A_NORMAL},
};

static attr_t style_attr[ST__COUNT];
static int have_color;

void ui_styles_init(int use_color)
{
    have_color = 0;
    if (use_color && start_color() == OK) {
        have_color = 1;
        int defaults = use_default_colors() == OK;
        for (int s = 0; s < ST__COUNT; s++) {
            const style_def *d = &style_defs[s];
            if (d->fg < 0 && d->bg < 0) {
                style_attr[s] = d->extra;
                continue;
            }
            short fg = d->fg, bg = d->bg;
            if (s >= ST_CLASS0 && s < ST_CLASS0 + SPLIT__COUNT) {
                const split_colour *pc = &split_colours[s - ST_CLASS0];
                fg = (short)(COLORS >= 256 ? pc->xterm256 : pc->ansi);
            }
            if (s >= ST_KIND0 && s < ST_KIND0 + PALETTE_SIM_KINDS) {
                const kind_colour *kc = &sim_kind_colours[s - ST_KIND0];
                fg = (short)(COLORS >= 256 ? kc->xterm256 : kc->ansi);
            }
            if (!defaults) {
                if (fg < 0) fg = COLOR_WHITE;
                if (bg < 0) bg = COLOR_BLACK;
            }
            init_pair((short)(s + 1), fg, bg);
            style_attr[s] = COLOR_PAIR(s + 1) | d->extra;
        }
        /* the selection must read as a selection whatever the colours */
        style_attr[ST_SELECTED] |= A_BOLD;
    } else {
        for (int s = 0; s < ST__COUNT; s++) style_attr[s] = style_defs[s].mono;
    }
}

int ui_has_color(void) { return have_color; }

attr_t ui_attr(int st)
{
    return st >= 0 && st < ST__COUNT ? style_attr[st] : A_NORMAL;
}

/* ---- glyphs ------------------------------------------------------------ */

static const glyphs glyphs_utf8 = {
    1,
    {" ", "│", "│", "│", "─", "┘", "┐", "┤", "─", "└", "┌", "├", "─", "┴", "┬", "┼"},
    "▼", "→", "←", "▼",
    {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"},
    {"█", "▓", "░"},
    "…", "·", "×", "★", "■", "□", "−",
    "○",
};

static const glyphs glyphs_ascii = {
    0,
    {" ", "|", "|", "|", "-", "+", "+", "+", "-", "+", "+", "+", "-", "+", "+", "+"},
    "v", "->", "<-", "v",
    {" ", ".", "_", "_", "=", "=", "#", "#", "#"}, /* 1/8 a dot: a low bar stays visible */
    {"#", "=", "."},
    "~", "-", "x", "*", "#", ".", "-",
    "o",
};

const glyphs *G = &glyphs_ascii;

int ui_locale_is_utf8(void)
{
    const char *cs = nl_langinfo(CODESET);
    return cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
}

void ui_glyphs_init(int utf8)
{
    const char *force = getenv("LAYERWISE_ASCII");
    if (force && force[0] && strcmp(force, "0") != 0) utf8 = 0;
    G = utf8 ? &glyphs_utf8 : &glyphs_ascii;
}

/* ---- text -------------------------------------------------------------- */

/* One code point of s: its length in bytes (1 for a stray byte) and its
 * width in cells: wcwidth's in a UTF-8 terminal (2 for CJK, 0 for a
 * combining mark), 1 in ASCII mode, where it is shown as '?'. */
static int cp_next(const char *s, int *cells)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80) {
        *cells = 1;
        return 1;
    }
    int n = u[0] >= 0xF0 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC0 ? 2 : 1;
    unsigned cp = n == 1 ? u[0] : u[0] & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((u[i] & 0xC0) != 0x80) {
            n = i;
            break;
        }
        cp = (cp << 6) | (u[i] & 0x3F);
    }
    int wdt = G->utf8 ? wcwidth((wchar_t)cp) : 1;
    *cells = wdt < 0 ? 1 : wdt;
    return n;
}

int ui_next_char(const char *s, int *cells) { return cp_next(s, cells); }

/* Format characters (U+202E, U+200D, ...: util.h) are shown escaped,
 * never raw: a name could otherwise display reversed or hide a part. Text
 * holding one is drawn and measured as its escaped form (NULL: none). */
static char *shown_form(const char *s)
{
    if (!lw_text_has_format(s)) return NULL;
    lw_buf b = {0};
    lw_text_shown(&b, s);
    return b.s;
}

int ui_width(const char *s)
{
    char *esc = shown_form(s);
    if (esc) {
        int n = ui_width(esc);
        free(esc);
        return n;
    }
    int n = 0, c;
    while (*s) {
        s += cp_next(s, &c);
        n += c;
    }
    return n;
}

/* Bytes of the longest prefix of s that fits in `cols` cells (a wide
 * character is never cut in half). */
static size_t prefix_bytes(const char *s, int cols)
{
    size_t i = 0;
    int used = 0, c;
    while (s[i]) {
        int k = cp_next(s + i, &c);
        if (used + c > cols) break;
        used += c;
        i += (size_t)k;
    }
    return i;
}

/* Text ui_put cut inside a word: what the 80-column test looks for. */
static int cut_count;
static char cut_log[1024];

static int word_byte(unsigned char c) { return c >= 0x80 || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); }

static void note_cut(int y, int x, const char *s, size_t kept)
{
    if (!s[kept] || kept == 0 || !word_byte((unsigned char)s[kept - 1]) || !word_byte((unsigned char)s[kept])) return;
    if (cut_count++ < 8) {
        size_t k = strlen(cut_log);
        snprintf(cut_log + k, sizeof cut_log - k, "row %d col %d: \"%.*s|%.20s\"\n", y, x, (int)(kept < 60 ? kept : 60),
                 s + (kept < 60 ? 0 : kept - 60), s + kept);
    }
}

void ui_cuts_reset(void)
{
    cut_count = 0;
    cut_log[0] = 0;
}

int ui_cuts(const char **log)
{
    if (log) *log = cut_log;
    return cut_count;
}

int ui_put(WINDOW *w, int y, int x, int maxw, int st, const char *s)
{
    int H, W;
    getmaxyx(w, H, W);
    if (y < 0 || y >= H || x >= W || maxw <= 0 || !s) return 0;
    char *esc = shown_form(s);
    if (esc) {
        int n = ui_put(w, y, x, maxw, st, esc);
        free(esc);
        return n;
    }
    if (x < 0) {
        /* drop the columns left of the window */
        size_t skip = prefix_bytes(s, -x);
        maxw += x;
        s += skip;
        x = 0;
        if (maxw <= 0) return 0;
    }
    if (maxw > W - x) maxw = W - x;
    size_t bytes = prefix_bytes(s, maxw);
    note_cut(y, x, s, bytes);
    attr_t at = ui_attr(st);
    wattrset(w, at);
    int n = 0;
    if (G->utf8) {
        mvwaddnstr(w, y, x, s, (int)bytes);
        for (size_t i = 0; i < bytes;) {
            int c;
            i += (size_t)cp_next(s + i, &c);
            n += c;
        }
    } else {
        /* no UTF-8 here: a non-ASCII character is a '?', never raw bytes */
        wmove(w, y, x);
        for (size_t i = 0; i < bytes;) {
            int c, k = cp_next(s + i, &c);
            waddch(w, k == 1 && (unsigned char)s[i] < 0x80 ? (chtype)(unsigned char)s[i] : (chtype)'?');
            i += (size_t)k;
            n++;
        }
    }
    wattrset(w, A_NORMAL);
    return n;
}

int ui_putf(WINDOW *w, int y, int x, int maxw, int st, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return ui_put(w, y, x, maxw, st, buf);
}

int ui_put_right(WINDOW *w, int y, int x, int fw, int st, const char *s)
{
    int n = ui_width(s);
    if (n >= fw) return ui_put(w, y, x, fw, st, s);
    return ui_put(w, y, x + fw - n, n, st, s);
}

void ui_fill(WINDOW *w, int y, int x, int n, int st)
{
    int H, W;
    getmaxyx(w, H, W);
    if (y < 0 || y >= H) return;
    if (x < 0) {
        n += x;
        x = 0;
    }
    if (x + n > W) n = W - x;
    if (n <= 0) return;
    wattrset(w, ui_attr(st));
    mvwhline(w, y, x, ' ', n);
    wattrset(w, A_NORMAL);
}

void ui_hline(WINDOW *w, int y, int x, int n, int st)
{
    for (int i = 0; i < n; i++) ui_put(w, y, x + i, 1, st, G->box[LINE_LEFT | LINE_RIGHT]);
}

const char *ui_fit(const char *s, int n, char *buf, size_t bufsz)
{
    if (n <= 0) {
        buf[0] = 0;
        return buf;
    }
    char *esc = shown_form(s); /* cut the escaped form: the cut is what is shown */
    if (esc) {
        ui_fit(esc, n, buf, bufsz);
        free(esc);
        return buf;
    }
    if (ui_width(s) <= n) {
        snprintf(buf, bufsz, "%s", s);
        return buf;
    }
    size_t b = prefix_bytes(s, n - 1);
    if (b >= bufsz) b = bufsz - 1;
    snprintf(buf, bufsz, "%.*s%s", (int)b, s, G->ellipsis);
    return buf;
}

const char *ui_fit_mid(const char *s, int n, char *buf, size_t bufsz)
{
    char *esc = shown_form(s);
    if (esc) {
        ui_fit_mid(esc, n, buf, bufsz);
        free(esc);
        return buf;
    }
    int len = ui_width(s);
    if (len <= n || n < 5) return ui_fit(s, n, buf, bufsz);
    int head = (n - 1) / 2, tail = n - 1 - head;
    size_t hb = prefix_bytes(s, head);
    const char *t = s + prefix_bytes(s, len - tail);
    snprintf(buf, bufsz, "%.*s%s%s", (int)hb, s, G->ellipsis, t);
    return buf;
}

int ui_wrap(WINDOW *w, rect r, int st, const char *text)
{
    int row = 0;
    const char *s = text;
    char line[1024];
    if (r.w <= 0) return 0;
    while (*s && row < r.h) {
        if (*s == '\n') {
            row++;
            s++;
            continue;
        }
        /* take words while they fit */
        int cols = 0;
        size_t len = 0;
        const char *q = s;
        while (*q && *q != '\n') {
            const char *e = q;
            while (*e && *e != ' ' && *e != '\n') e++;
            size_t wb = (size_t)(e - q);
            char word[512];
            snprintf(word, sizeof word, "%.*s", (int)(wb < 511 ? wb : 511), q);
            int ww = ui_width(word);
            int need = (cols ? 1 : 0) + ww;
            if (cols + need > r.w && cols > 0) break;
            if (ww > r.w) {
                /* a word wider than the row (a long path): break it at the edge */
                wb = prefix_bytes(q, r.w);
                if (wb == 0) wb = (size_t)ui_next_char(q, &ww);
                e = q + wb;
                need = r.w;
            }
            if (len + wb + 2 >= sizeof line) break;
            if (cols) line[len++] = ' ';
            memcpy(line + len, q, wb);
            len += wb;
            cols += need;
            q = e;
            while (*q == ' ') q++;
            if (cols >= r.w) break;
        }
        line[len] = 0;
        if (w) ui_put(w, r.y + row, r.x, r.w, st, line);
        row++;
        if (q == s) q++; /* nothing taken: skip a byte rather than loop */
        s = q;
        if (*s == '\n') s++;
    }
    return row;
}

const char *ui_join_parts(const ui_part *parts, int n, const char *sep, int width, char *out, size_t outsz)
{
    int form[32]; /* 2 full, 1 brief, 0 left out */
    if (n > 32) n = 32;
    for (int i = 0; i < n; i++) form[i] = parts[i].full && parts[i].full[0] ? 2 : 0;
    for (;;) {
        size_t k = 0;
        out[0] = 0;
        for (int i = 0; i < n && k < outsz; i++) {
            if (!form[i]) continue;
            const char *t = form[i] == 2 || !parts[i].brief ? parts[i].full : parts[i].brief;
            k += (size_t)snprintf(out + k, outsz - k, "%s%s", k ? sep : "", t);
        }
        if (ui_width(out) <= width) return out;
        /* every brief form first, the highest rank first; then the highest
         * rank is left out */
        int worst = -1;
        for (int i = 0; i < n; i++)
            if (form[i] == 2 && parts[i].brief && parts[i].rank > 0 &&
                (worst < 0 || parts[i].rank >= parts[worst].rank))
                worst = i;
        if (worst >= 0) {
            form[worst] = 1;
            continue;
        }
        for (int i = 0; i < n; i++)
            if (form[i] && parts[i].rank > 0 && (worst < 0 || parts[i].rank >= parts[worst].rank)) worst = i;
        if (worst < 0) return out; /* only what must stay: the caller's clip */
        form[worst] = 0;
    }
}

const char *fmt_ms(double ms, char *buf, size_t n)
{
    if (!isfinite(ms)) snprintf(buf, n, "inf");
    else if (ms >= 1000) snprintf(buf, n, "%.0f ms", ms);
    else snprintf(buf, n, "%.2f ms", ms);
    return buf;
}

void ui_time_bar(WINDOW *w, int y, int x, int n, double compute, double sync, double transfer)
{
    double total = compute + sync + transfer;
    if (n <= 0) return;
    if (total <= 0) {
        ui_fill(w, y, x, n, ST_DIM);
        return;
    }
    double parts[3] = {compute, sync, transfer};
    int st[3] = {ST_COMPUTE, ST_SYNC, ST_TRANSFER};
    double acc = 0;
    int col = 0;
    for (int k = 0; k < 3; k++) {
        acc += parts[k];
        int end = (int)lround(acc / total * n);
        if (k == 2) end = n;
        for (; col < end; col++) ui_put(w, y, x + col, 1, st[k], G->hfill[k]);
    }
}

void ui_progress(WINDOW *w, int y, int x, int n, double frac)
{
    if (frac < 0) frac = 0;
    if (frac > 1) frac = 1;
    int fill = (int)(frac * n + 0.5);
    for (int i = 0; i < n; i++) ui_put(w, y, x + i, 1, i < fill ? ST_GOOD : ST_DIM, i < fill ? G->hfill[0] : G->hfill[2]);
}

int ui_class_legend(WINDOW *w, int y, int x, int maxw, const int *present)
{
    int x0 = x, end = x + maxw;
    x += ui_put(w, y, x, end - x, ST_DIM, "split:");
    for (int k = 0; k < SPLIT__COUNT; k++) {
        if (present && !present[k]) continue;
        const char *word = split_colours[k].word;
        if (x + 1 + ui_width(word) > end) break;
        x += ui_put(w, y, x, end - x, ST_NORMAL, " ");
        x += ui_put(w, y, x, end - x, ST_CLASS0 + k, word);
    }
    return x - x0;
}

void ui_too_small(WINDOW *w, int h, int wd)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "%dx%d, need %dx%d", wd, h, TUI_MIN_W, TUI_MIN_H);
    snprintf(b, sizeof b, "enlarge, or q: quit");
    const char *lines[] = {"Terminal too small", a, b};
    werase(w);
    int y0 = h / 2 - 1;
    if (y0 < 0) y0 = 0;
    for (int i = 0; i < 3; i++) {
        int len = ui_width(lines[i]);
        int x = len < wd ? (wd - len) / 2 : 0;
        ui_put(w, y0 + i, x, wd, i == 0 ? ST_ERROR : ST_NORMAL, lines[i]);
    }
}
