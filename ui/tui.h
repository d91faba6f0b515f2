/*
 * tui: the ncurses front end. tui_main opens the terminal UI for the given
 * network, cluster and settings, and returns the program's exit status.
 */
#ifndef LW_TUI_H
#define LW_TUI_H

#include "cli.h"

int tui_main(const tui_args *a);

/* For tests: arms the fatal-error paths (SIGSEGV, SIGABRT, SIGBUS, SIGFPE,
 * out of memory) for the curses screen the caller opened, as tui_main does
 * for its own; delay, if set, runs before the terminal is restored (a slow
 * endwin). */
void tui__arm_fatal(void);
extern void (*tui__restore_delay)(void);

#endif
