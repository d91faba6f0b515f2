#include "tui.h"
#include <stdio.h>
int tui_main(const tui_args *a)
{
    (void)a;
    fprintf(stderr, "layerwise: the TUI is not built yet\n");
    return 1;
}
