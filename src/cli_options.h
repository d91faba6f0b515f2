/*
 * cli_options: the command line described once — every command with its
 * synopsis and summary, every option with its spellings, argument, the
 * commands that take it and its help, the environment variables the program
 * reads and its exit statuses. `layerwise --help` and the man page
 * layerwise(1) are both written from these tables, so neither can drift
 * from the other; tests/doc_test.sh checks that every option the parser in
 * cli.c accepts is here. Everything is static and read-only; nothing here
 * allocates.
 */
#ifndef LW_CLI_OPTIONS_H
#define LW_CLI_OPTIONS_H

#include <stdio.h>

#ifndef LW_VERSION
#define LW_VERSION "0.1"
#endif

/* "" is `layerwise` alone. synopsis: what follows "layerwise NAME", lines
 * split by '\n' where --help breaks them; summary: what it does. */
typedef struct cli_command {
    const char *name, *synopsis, *summary;
} cli_command;

/* short_name: "-n" or NULL; arg: "NET", "[SECONDS]" (optional) or NULL;
 * commands: "all" (every command, the TUI included), "cli" (every command
 * but the TUI) or the names of those that take it, separated by spaces; help: '\n' where --help breaks it. */
typedef struct cli_option {
    const char *short_name, *long_name, *arg, *commands, *help;
} cli_option;

/* An environment variable (name) and what the program does with it. */
typedef struct cli_note {
    const char *name, *text;
} cli_note;

extern const cli_command cli_commands[];
extern const int cli_n_commands;
extern const cli_option cli_options[];
extern const int cli_n_options;
extern const cli_note cli_environment[];
extern const int cli_n_environment;
extern const cli_note cli_exit_statuses[];
extern const int cli_n_exit_statuses;

/* The text of `layerwise --help`. */
void cli_usage_write(FILE *f);
/* The man page layerwise(1), in roff (man macros). */
void cli_man_write(FILE *f);

#endif
