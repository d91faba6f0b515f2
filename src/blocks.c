/*
 * blocks: the repeated blocks of a network from its layer names and
 * structure (blocks.h).
 */
#include "blocks.h"

#include <stdlib.h>
#include <string.h>

/* Splits "block3.attn" into the stem's length (5), the number (3) and the
 * part ("attn"); 0 if the name is not STEM<digits>.<part> with a non-empty
 * stem that ends in a non-digit. */
static int split_name(const char *name, size_t *stem_len, long *index, const char **part)
{
    const char *dot = strchr(name, '.');
    if (!dot || dot == name || !dot[1]) return 0;
    const char *d = dot;
    while (d > name && d[-1] >= '0' && d[-1] <= '9') d--;
    if (d == dot || d == name || (size_t)(d - name) >= NET_BLOCK_STEM) return 0;
    *stem_len = (size_t)(d - name);
    *index = strtol(d, NULL, 10);
    *part = dot + 1;
    return 1;
}

/* The layers from i with the same stem and number as layer i (a block);
 * 0 if layer i's name is not a block's. */
static int block_len(const network *n, int i)
{
    size_t sl, sl2;
    long k, k2;
    const char *part;
    if (!split_name(n->layers[i].name, &sl, &k, &part)) return 0;
    int j = i + 1;
    while (j < n->n_layers && split_name(n->layers[j].name, &sl2, &k2, &part) && sl2 == sl && k2 == k &&
           strncmp(n->layers[j].name, n->layers[i].name, sl) == 0)
        j++;
    return j - i;
}

/* Whether the block at b (len layers) repeats the block at a: the same
 * stem, parts and types in order, and every input inside the block at the
 * same offset (inputs outside it may differ: the previous block's output). */
static int same_block(const network *n, int a, int b, int len)
{
    for (int j = 0; j < len; j++) {
        const layer *x = &n->layers[a + j], *y = &n->layers[b + j];
        size_t sx, sy;
        long kx, ky;
        const char *px, *py;
        if (x->type != y->type || x->n_inputs != y->n_inputs) return 0;
        if (!split_name(x->name, &sx, &kx, &px) || !split_name(y->name, &sy, &ky, &py)) return 0;
        if (sx != sy || strncmp(x->name, y->name, sx) != 0 || strcmp(px, py) != 0) return 0;
        if (shape_elems(x->out) != shape_elems(y->out)) return 0;
        for (int s = 0; s < x->n_inputs; s++) {
            int ix = x->inputs[s] - a, iy = y->inputs[s] - b;
            int in_x = ix >= 0 && ix < len, in_y = iy >= 0 && iy < len;
            if (in_x != in_y || (in_x && ix != iy)) return 0;
        }
    }
    return 1;
}

int net_find_blocks(const network *n, net_block_run *out, int max)
{
    int found = 0;
    for (int i = 0; i < n->n_layers;) {
        int len = block_len(n, i);
        if (len == 0) {
            i++;
            continue;
        }
        int count = 1;
        while (i + (count + 1) * len <= n->n_layers && block_len(n, i + count * len) == len &&
               same_block(n, i, i + count * len, len))
            count++;
        if (count >= 2) {
            if (found < max && out) {
                net_block_run *r = &out[found];
                size_t sl;
                long k;
                const char *part;
                split_name(n->layers[i].name, &sl, &k, &part);
                r->first = i, r->len = len, r->count = count, r->first_index = (int)k;
                memcpy(r->stem, n->layers[i].name, sl);
                r->stem[sl] = 0;
            }
            found++;
        }
        i += count * len;
    }
    return found;
}

int net_block_of(const net_block_run *runs, int n_runs, int li, int *block, int *part)
{
    for (int r = 0; r < n_runs; r++) {
        int off = li - runs[r].first;
        if (off >= 0 && off < runs[r].len * runs[r].count) {
            if (block) *block = off / runs[r].len;
            if (part) *part = off % runs[r].len;
            return r;
        }
    }
    return -1;
}
