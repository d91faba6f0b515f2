/*
 * draw: the small drawing vocabulary every screen uses — named styles that
 * map to colour pairs when the terminal has colours (and NO_COLOR is not
 * set) and to bold/reverse/underline/dim otherwise, so no meaning rides on
 * colour alone; glyphs in UTF-8 with an ASCII fallback for terminals whose
 * locale is not UTF-8; and text output clipped to a width.
 *
 * The style table and the glyph set are process-wide (one terminal per
 * process); ui_styles_init and ui_glyphs_init set them up.
 */
#ifndef LW_DRAW_H
#define LW_DRAW_H

#include <curses.h>

#include "palette.h"
#include "util.h"

/* The smallest terminal the TUI draws in (smaller: ui_too_small's notice). */
#define TUI_MIN_W 80
#define TUI_MIN_H 24

/* A rectangle of a window (screens draw only inside it). */
typedef struct rect {
    int y, x, h, w;
} rect;

typedef enum {
    ST_NORMAL,
    ST_TITLE,       /* the tab bar */
    ST_TAB_ACTIVE,
    ST_CONTEXT,     /* network, cluster, settings line */
    ST_HINT,        /* the key hint bar */
    ST_HINT_KEY,
    ST_STATUS,
    ST_ERROR,
    ST_HEADER,      /* column headers */
    ST_SELECTED,    /* the selected row or node */
    ST_PINNED,
    ST_CHANGED,     /* changed by the last what-if */
    ST_DIM,
    ST_BOLD,
    ST_GOOD,        /* the optimum, savings */
    ST_BAD,         /* worse than the optimum */
    ST_COMPUTE,
    ST_SYNC,
    ST_TRANSFER,
    ST_EDGE,
    ST_EDGE_HI,
    ST_NODE_HI,     /* nodes the current step touches */
    ST_NEXT,        /* the stepper's next node: reversed, in colour or not */
    ST_CLASS0,      /* config classes (split_class, palette.h): the exports' colours */
    ST_SERIES0 = ST_CLASS0 + SPLIT__COUNT, /* data, model, owt, layer-wise, pipeline (the Scale screen's) */
    ST_KIND0 = ST_SERIES0 + 5, /* simulated task kinds (palette.h's sim_kind_colours): the Timeline's */
    ST__COUNT = ST_KIND0 + PALETTE_SIM_KINDS
} style;

/* use_color: has_colors() and no NO_COLOR; call after initscr/newterm. */
void ui_styles_init(int use_color);
int ui_has_color(void);
attr_t ui_attr(int st);

typedef struct glyphs {
    int utf8;
    const char *box[16];       /* by line mask: bit 0 up, 1 down, 2 left, 3 right */
    const char *arrow_down, *arrow_right, *arrow_left, *sort_mark;
    const char *eighths[9];    /* vertical bar fill, 0..8 eighths */
    const char *hfill[3];      /* compute, sync, transfer fills of the bar */
    const char *ellipsis, *dot, *times, *star, *gpu_on, *gpu_off, *minus;
    const char *gpu_idle;      /* a GPU given to the strategy that runs no task on it */
} glyphs;

enum { LINE_UP = 1, LINE_DOWN = 2, LINE_LEFT = 4, LINE_RIGHT = 8 };

extern const glyphs *G;
/* utf8: the locale's codeset is UTF-8 and LAYERWISE_ASCII is not set. */
void ui_glyphs_init(int utf8);
/* True when the current locale's codeset is UTF-8. */
int ui_locale_is_utf8(void);

/* Display columns of a UTF-8 string (each code point one column: the UI
 * only uses narrow glyphs). */
/* The code point at s: its length in bytes, and in *cells its width on
 * screen (2 for a wide character, 1 for anything in ASCII mode). */
int ui_next_char(const char *s, int *cells);
int ui_width(const char *s);
/* Writes s at (y, x), clipped to maxw columns; returns columns written. */
int ui_put(WINDOW *w, int y, int x, int maxw, int st, const char *s);
/* Text that ui_put had to cut inside a word (a line that ends mid-word),
 * counted since ui_cuts_reset: how many, and *log (if non-NULL) the first
 * few as "row Y col X: "kept|dropped"" lines. The screen tests read it. */
void ui_cuts_reset(void);
int ui_cuts(const char **log);
int ui_putf(WINDOW *w, int y, int x, int maxw, int st, const char *fmt, ...) LW_PRINTF(6, 7);
/* Right-aligned in a field of width fw ending at x + fw. */
int ui_put_right(WINDOW *w, int y, int x, int fw, int st, const char *s);
/* Fills columns [x, x + n) of row y with spaces in a style. */
void ui_fill(WINDOW *w, int y, int x, int n, int st);
/* Horizontal rule. */
void ui_hline(WINDOW *w, int y, int x, int n, int st);
/* Copies s into buf, cut to n columns with an ellipsis when longer. */
const char *ui_fit(const char *s, int n, char *buf, size_t bufsz);
/* The same, cutting the middle: "mixed_6e/…7dbl_3". */
const char *ui_fit_mid(const char *s, int n, char *buf, size_t bufsz);
/* Word-wraps text into rows of width r.w starting at r.y; returns rows used
 * (stops at r.h). A word wider than a row is broken at its edge. w NULL:
 * only counts the rows. */
int ui_wrap(WINDOW *w, rect r, int st, const char *text);

/* One piece of a line that gives way when the line is too narrow: its full
 * text, a shorter one (or NULL), and its rank: 0 always stays, higher ranks
 * give way first. */
typedef struct ui_part {
    const char *full, *brief;
    int rank;
} ui_part;
/* Joins the parts with sep into out so it fits in width columns: parts
 * take their brief forms, the highest rank (the last among equals) first,
 * then parts are left out in the same order, until it fits; words are never
 * cut. Returns out. */
const char *ui_join_parts(const ui_part *parts, int n, const char *sep, int width, char *out, size_t outsz);

/* Human-readable times: "570.1 ms" (sizes: lw_format_bytes). */
const char *fmt_ms(double ms, char *buf, size_t n);

/* A horizontal stacked bar of compute/sync/transfer over n columns. */
void ui_time_bar(WINDOW *w, int y, int x, int n, double compute, double sync, double transfer);

/* A progress bar of n columns, frac in [0, 1]. */
void ui_progress(WINDOW *w, int y, int x, int n, double frac);

/* The key of the config colours at (y, x): "split:" and the word of each
 * class present (present NULL: every class), each in its style (without
 * colour its attribute: bold n, underlined c, italic h/w, bold underlined
 * mixed, dim one GPU). A word that does not fit in maxw is left out whole.
 * Returns the columns written. */
int ui_class_legend(WINDOW *w, int y, int x, int maxw, const int *present);

/* The "terminal too small" notice, centred in the window. */
void ui_too_small(WINDOW *w, int h, int wd);

#endif
