/*
 * tui: the ncurses front end. tui_main opens the terminal UI for the given
 * network, cluster and settings, and returns the program's exit status.
 */
#ifndef LW_TUI_H
#define LW_TUI_H

#include "cli.h"

int tui_main(const tui_args *a);

#endif
