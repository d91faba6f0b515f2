#include "json_util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

void json_line_col(const char *text, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

int json_line_of_name(const char *text, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(text, "\"name\""); p; p = strstr(p + 1, "\"name\"")) {
        const char *q = p + 6;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
        if (*q != ':') continue;
        q++;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
        if (*q == '"' && strncmp(q + 1, name, nl) == 0 && q[1 + nl] == '"') {
            int line, col;
            json_line_col(text, (size_t)(q - text), &line, &col);
            return line;
        }
    }
    return 0;
}

int json_check_trailing(const char *text, size_t len, const char *end, const char *label, lw_error *err)
{
    if (!end || end < text || end > text + len) return 0;
    const char *q = end;
    while (q < text + len && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
    if (q >= text + len || *q == '\0') return 0;
    int line, col;
    json_line_col(text, (size_t)(q - text), &line, &col);
    return lw_fail(err, 2, "%s:%d:%d: malformed JSON (text after the end of the document)", label, line, col);
}

/* ---- what cJSON does not check ---- */

typedef struct scan_key {
    const char *s;
    size_t n, off;
} scan_key;

static int scan_key_cmp(const void *x, const void *y)
{
    const scan_key *a = x, *b = y;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    int c = memcmp(a->s, b->s, a->n);
    if (c) return c;
    return a->off < b->off ? -1 : a->off > b->off ? 1 : 0;
}

int json_scan(const char *text, size_t len, const char *label, const char *array_key, size_t **item_offs,
              int *n_items, lw_error *err)
{
    typedef struct frame {
        char obj;          /* '{' or '[' */
        char expect_key;   /* in an object, the next string is a key */
        char items;        /* this array is array_key's value at the top level */
        size_t first_key;  /* its keys start here in `keys` */
    } frame;
    frame *st = NULL;
    scan_key *keys = NULL;
    size_t depth = 0, cap = 0, nk = 0, kcap = 0;
    int pending_items = 0, rc = 0, ni = 0, icap = 0;
    size_t *items = NULL;
    for (size_t i = 0; i < len && text[i] && rc == 0; i++) {
        char c = text[i];
        if (c == '{' || c == '[') {
            if (depth && st[depth - 1].items && c == '{') {
                if (ni == icap) {
                    icap = icap ? icap * 2 : 64;
                    items = lw_realloc(items, sizeof *items * (size_t)icap);
                }
                items[ni++] = i;
            }
            if (depth == cap) {
                cap = cap ? cap * 2 : 16;
                st = lw_realloc(st, sizeof *st * cap);
            }
            st[depth] = (frame){c, c == '{', (char)(c == '[' && depth == 1 && pending_items), nk};
            pending_items = 0;
            depth++;
        } else if (c == '}' || c == ']') {
            if (!depth) break;
            frame *f = &st[depth - 1];
            if (f->obj == '{' && nk - f->first_key > 1) {
                scan_key *k = keys + f->first_key;
                size_t m = nk - f->first_key;
                qsort(k, m, sizeof *k, scan_key_cmp);
                for (size_t j = 1; j < m && rc == 0; j++)
                    if (k[j].n == k[j - 1].n && memcmp(k[j].s, k[j - 1].s, k[j].n) == 0) {
                        int l1, c1, l2, c2;
                        json_line_col(text, k[j - 1].off, &l1, &c1);
                        json_line_col(text, k[j].off, &l2, &c2);
                        rc = lw_fail(err, 2, "%s:%d:%d: key \"%.*s\" appears twice in one object (first at line %d)",
                                     label, l2, c2, (int)(k[j].n > 100 ? 100 : k[j].n), k[j].s, l1);
                    }
            }
            nk = f->first_key;
            depth--;
        } else if (c == ',') {
            if (depth && st[depth - 1].obj == '{') st[depth - 1].expect_key = 1;
        } else if (c == '"') {
            size_t start = i + 1, j = start;
            while (j < len && text[j] && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
            if (depth && st[depth - 1].obj == '{' && st[depth - 1].expect_key) {
                if (nk == kcap) {
                    kcap = kcap ? kcap * 2 : 64;
                    keys = lw_realloc(keys, sizeof *keys * kcap);
                }
                keys[nk++] = (scan_key){text + start, j - start, i};
                st[depth - 1].expect_key = 0;
                pending_items = depth == 1 && array_key && strlen(array_key) == j - start &&
                                memcmp(array_key, text + start, j - start) == 0;
            }
            i = j;
        }
    }
    free(st);
    free(keys);
    if (rc != 0 || !item_offs) {
        free(items);
        if (item_offs) *item_offs = NULL;
        if (n_items) *n_items = 0;
        return rc;
    }
    *item_offs = items;
    *n_items = ni;
    return 0;
}

/* A NUL (\u0000) in any string of a parsed document: cJSON keeps it, and
 * every name is then cut at it in silence ("conv1\u0000hidden" would load
 * as conv1). No text of these formats can hold one, so it is refused where
 * it is written. The document is valid JSON here: strings are where the
 * quotes say. */
static int json_check_nul(const char *text, size_t len, const char *label, lw_error *err)
{
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!in_string) {
            in_string = c == '"';
            continue;
        }
        if (c == '"') {
            in_string = 0;
        } else if (c == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && i + 5 < len && memcmp(text + i + 2, "0000", 4) == 0) {
                int line, col;
                json_line_col(text, i, &line, &col);
                return lw_fail(err, 2, "%s:%d:%d: a string holds \\u0000 (NUL), which would cut it short there; "
                                       "no name may contain it", label, line, col);
            }
            i++;
        }
    }
    return 0;
}

cJSON *json_parse_doc(const char *text, size_t len, const char *label, lw_error *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = (at && at >= text && at <= text + len) ? (size_t)(at - text) : len;
        /* cJSON stops at the last byte of a truncated document */
        size_t k = off < len ? off + 1 : len;
        while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r')) k++;
        int line, col;
        json_line_col(text, off, &line, &col);
        lw_fail(err, 2, "%s:%d:%d: malformed JSON%s", label, line, col,
                k >= len ? " (the document ends too soon)" : "");
        return NULL;
    }
    if (json_check_trailing(text, len, end, label, err) != 0 || json_check_nul(text, len, label, err) != 0 ||
        json_scan(text, len, label, NULL, NULL, NULL, err) != 0) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}
