/*
 * list: the one list cursor (screens.h) behind every list on screen: the
 * strategy table, the why-not configs, the cluster fields, help, the
 * stepper's table rows; and the search hook every screen's find uses.
 */
#include "list.h"

#include <curses.h>

#include <limits.h>

static int page_of(const list_cursor *c)
{
    return c->rows > 1 ? c->rows - 1 : 10;
}

static int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int list_key(list_cursor *c, int key, int n, int select, int wrap)
{
    int *pos = select ? &c->sel : &c->top;
    int v = *pos, page = page_of(c);
    switch (key) {
    case KEY_UP:
    case 'k': v = wrap && v <= 0 ? n - 1 : v - 1; break;
    case KEY_DOWN:
    case 'j': v = wrap && v >= n - 1 ? 0 : v + 1; break;
    case KEY_PPAGE: v -= page; break;
    case KEY_NPAGE: v += page; break;
    case KEY_HOME: v = 0; break;
    case KEY_END: v = select ? n - 1 : INT_MAX / 2; break;
    default: return 0;
    }
    /* a scrolled list's end is known when it is drawn (list_fit) */
    *pos = select ? clamp(v, 0, n > 0 ? n - 1 : 0) : v < 0 ? 0 : v;
    return 1;
}

void list_fit(list_cursor *c, int n, int rows, int select)
{
    c->rows = rows;
    if (select) {
        c->sel = clamp(c->sel, 0, n > 0 ? n - 1 : 0);
        if (c->sel < c->top) c->top = c->sel;
        if (c->sel >= c->top + rows) c->top = c->sel - rows + 1;
    }
    if (c->top > n - rows) c->top = n - rows;
    if (c->top < 0) c->top = 0;
}

int list_find(list_cursor *c, int n, int dir, int (*match)(int row, void *user), void *user, int *nth)
{
    int count = 0, found = -1;
    for (int i = 1; i <= n; i++) {
        int row = ((c->sel + (dir < 0 ? -i : i)) % n + n) % n;
        if (!match(row, user)) continue;
        count++;
        if (found < 0) found = row;
    }
    if (found < 0) return 0;
    c->sel = found;
    if (nth) { /* its place among the matches, top to bottom */
        *nth = 0;
        for (int row = 0; row <= found; row++) *nth += match(row, user) != 0;
    }
    return count;
}
