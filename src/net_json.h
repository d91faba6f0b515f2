/*
 * net_json: reading "layerwise-net/1" network files.
 *
 * Every error names the file, the line (and column for syntax errors) or the
 * layer, and what is wrong; err->code is 2. The returned network is owned by
 * the caller (net_free).
 */
#ifndef LW_NET_JSON_H
#define LW_NET_JSON_H

#include "model.h"

/* Hard limits that keep absurd files from exhausting memory or time. */
#define NET_MAX_LAYERS 20000
#define NET_MAX_DIM 16777216L      /* any channel count, height or width */
#define NET_MAX_ELEMS (1L << 34)   /* elements of one sample's tensor */
#define NET_MAX_INPUTS 64

/* text is the file's contents; label is what messages call it (a path). */
network *net_from_json(const char *text, size_t len, const char *label, lw_error *err);
network *net_load_file(const char *path, lw_error *err);

/* Line (1-based) of the first `"name": "<name>"` in text, or 0. */
int json_line_of_name(const char *text, const char *name);
/* Line and column (1-based) of a byte offset. */
void json_line_col(const char *text, size_t off, int *line, int *col);

/* After a successful parse that stopped at end: 0 if only white space
 * follows, else -1 with err set ("FILE:LINE:COL: malformed JSON ..."). */
int json_check_trailing(const char *text, size_t len, const char *end, const char *label, lw_error *err);

/* Parses a whole JSON document; on a syntax error or text after the end,
 * NULL with err set to "LABEL:LINE:COL: malformed JSON ..." (code 2). The
 * caller frees the tree with cJSON_Delete. */
struct cJSON;
/* What cJSON lets through, on text it has parsed: a key twice in one object
 * (an error naming file, line and column of the second). With array_key,
 * also the offsets where the objects of the top-level array under that key
 * start (*item_offs malloc'd, *n_items of them), for messages by index.
 * json_parse_doc runs it on every document. 0, or -1 with err set. */
int json_scan(const char *text, size_t len, const char *label, const char *array_key, size_t **item_offs,
              int *n_items, lw_error *err);

/* Parses a whole document: malformed JSON, trailing text, a duplicate key
 * (json_scan) or a NUL (\u0000) in any string is an error naming file,
 * line and column. */
struct cJSON *json_parse_doc(const char *text, size_t len, const char *label, lw_error *err);

/* Writes the network back as a layerwise-net/1 document (caller frees). */
char *net_to_json(const network *net);

#endif
