/*
 * many_layers: a network of n relus as layerwise-net/1 text, for the limit
 * tests and the bench (no criterion here: the bench links without it).
 */
#ifndef LW_MANY_LAYERS_H
#define LW_MANY_LAYERS_H

#include <stdio.h>

#include "util.h"

/* n layers: a chain of relus (wide = 0) or n relus all reading the input.
 * The caller frees the text. */
static inline char *many_layers_net(int n, int wide)
{
    lw_buf b = {0};
    lw_buf_printf(&b, "{\"format\": \"layerwise-net/1\", \"name\": \"n%d\",\n"
                      " \"input\": {\"name\": \"data\", \"channels\": 3, \"height\": 8, \"width\": 8},\n"
                      " \"layers\": [\n", n);
    for (int i = 0; i < n; i++) {
        char in[32];
        if (wide || i == 0) snprintf(in, sizeof in, "data");
        else snprintf(in, sizeof in, "r%d", i - 1);
        lw_buf_printf(&b, "  {\"name\": \"r%d\", \"type\": \"relu\", \"inputs\": [\"%s\"]}%s\n", i, in,
                      i + 1 < n ? "," : "");
    }
    lw_buf_printf(&b, "]}\n");
    return b.s;
}

#endif
