/*
 * keys: the global key table and the dispatch of a key (the prompt, then
 * the screen's table, then the global one; mouse clicks).
 */
#ifndef LW_KEYS_H
#define LW_KEYS_H

#include "app.h"

/* Looks key up in the screen's table, then the global one. */
action keys_dispatch(app *a, int key);
/* "Up", "PgDn", "a", "^L" ... for help and tests. */
const char *lw_key_name(int key, char *buf, size_t n);

/* The global key table (help lists it after the screen's own). */
extern const keybind app_global_keys[];
/* app_key and app_perform together; returns the action. */
action app_feed(app *a, int key);

#endif
