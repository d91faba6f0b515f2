/*
 * json_util: what every reader of the program's JSON files (networks,
 * clusters, strategies, profiles) needs beside cJSON: whole documents
 * parsed with messages that name file, line and column, the checks cJSON
 * leaves out (text after the document, a key twice in one object), and
 * where in the text something sits, for messages that point there.
 *
 * Errors set err (code 2) with a message that starts "LABEL:LINE:COL:",
 * where LABEL is the name the caller gives the text (a path).
 */
#ifndef LW_JSON_UTIL_H
#define LW_JSON_UTIL_H

#include "util.h"

struct cJSON;

/* Parses a whole JSON document; on a syntax error, text after the end, a
 * duplicate key (json_scan) or a NUL (\u0000) in any string, NULL with err
 * set naming file, line and column (code 2). The caller frees the tree with
 * cJSON_Delete. */
struct cJSON *json_parse_doc(const char *text, size_t len, const char *label, lw_error *err);

/* After a successful parse that stopped at end: 0 if only white space
 * follows, else -1 with err set ("FILE:LINE:COL: malformed JSON ..."). */
int json_check_trailing(const char *text, size_t len, const char *end, const char *label, lw_error *err);

/* What cJSON lets through, on text it has parsed: a key twice in one object
 * (an error naming file, line and column of the second). With array_key,
 * also the offsets where the objects of the top-level array under that key
 * start (*item_offs malloc'd, *n_items of them), for messages by index.
 * json_parse_doc runs it on every document. 0, or -1 with err set. */
int json_scan(const char *text, size_t len, const char *label, const char *array_key, size_t **item_offs,
              int *n_items, lw_error *err);

/* Line and column (1-based) of a byte offset. */
void json_line_col(const char *text, size_t off, int *line, int *col);

/* Line (1-based) of the first `"name": "<name>"` in text, or 0. */
int json_line_of_name(const char *text, const char *name);

#endif
