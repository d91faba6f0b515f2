/* The program's entry: the CLI, which hands `tui` (and no arguments) to the ncurses front end. */
#include "cli.h"
#include "tui.h"

int main(int argc, char **argv)
{
    return cli_main(argc, argv, tui_main);
}
