/*
 * list: a list's cursor (selection, first row shown) moved by keys and
 * searches, written once for every screen's list.
 */
#ifndef LW_LIST_H
#define LW_LIST_H

#include "util.h"

/* The selected row of a list of n rows and the first row shown. A list
 * that only scrolls (help) moves top alone. */
typedef struct list_cursor {
    int sel;   /* selected row */
    int top;   /* first row shown */
    int rows;  /* rows the last frame showed (a page is one less); 0: not drawn yet */
} list_cursor;

/* Up/Down/k/j one row, PgUp/PgDn a page,
 * Home/End the first and last, over n rows. select: move the selection
 * (kept in view when drawn); else scroll (n is not needed: list_fit keeps
 * top in range when the list is drawn). wrap: Up on the first row goes
 * to the last and Down on the last to the first. Returns 1 if key was one
 * of these, else 0 (nothing moved). */
int list_key(list_cursor *c, int key, int n, int select, int wrap);
/* Before drawing rows rows of n: keeps sel in [0, n) and, for a selecting
 * list, in view; keeps top in range. Records rows for the page size. */
void list_fit(list_cursor *c, int n, int rows, int select);
/* The search hook: selects the first row after sel (dir > 0) or before it
 * (dir < 0), wrapping round, that match() accepts. Returns how many rows
 * match (0: none, nothing moved) and, when nth is not NULL, the selected
 * one's place among them counted from the top (1-based). */
int list_find(list_cursor *c, int n, int dir, int (*match)(int row, void *user), void *user, int *nth);

#endif
