/*
 * find: the search (/, n, N) on every screen.
 */
#ifndef LW_FIND_H
#define LW_FIND_H

#include "app.h"

/* text contains the last search, ignoring case (an empty search matches
 * nothing). */
int app_search_match(const app *a, const char *text);
/* Layer li's name or type matches the last search. */
int app_layer_matches(const app *a, int li);
/* The next (dir 1) or previous (dir -1) match of the last search on the
 * screen shown (its find hook), reported on the status line. */
action app_find(app *a, int dir);

#endif
