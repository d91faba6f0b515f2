/*
 * embedded: the shipped data files compiled into the program (generated
 * into build/embedded.c by the Makefile), so `layerwise` works from any
 * directory. Names are relative to data/, e.g. "networks/vgg16.json".
 */
#ifndef LW_EMBEDDED_H
#define LW_EMBEDDED_H

typedef struct lw_embedded_file {
    const char *name;
    const unsigned char *data;
    unsigned long len;
} lw_embedded_file;

extern const lw_embedded_file lw_embedded_files[];
extern const int lw_embedded_count;

#endif
