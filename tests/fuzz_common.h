/*
 * fuzz_common: shared by the libFuzzer harnesses (tests/fuzz_*.c, built by
 * `make fuzz` into build/fuzz/ with clang -fsanitize=fuzzer,address,undefined).
 *
 * The loaders take a NUL-terminated buffer and its length (lw_read_file
 * gives them one), so every input is copied into a fresh buffer with a NUL
 * after it: ASan then catches a read one past the end. FUZZ_CHECK aborts
 * with a message when a property of a loaded document fails, so the fuzzer
 * records the input as a crash.
 */
#ifndef LW_FUZZ_COMMON_H
#define LW_FUZZ_COMMON_H

#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A copy of data with a NUL after it; caller frees. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t) abort();
    if (size) memcpy(t, data, size);
    t[size] = 0;
    return t;
}

#define FUZZ_CHECK(cond, ...)                                                                                        \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            fprintf(stderr, "fuzz property failed at %s:%d: %s: ", __FILE__, __LINE__, #cond);                      \
            fprintf(stderr, __VA_ARGS__);                                                                            \
            fputc('\n', stderr);                                                                                     \
            abort();                                                                                                 \
        }                                                                                                            \
    } while (0)

/* Every loader error is meant for a person: it must say something, and a
 * bad document is exit status 2 (design.md). */
static inline void fuzz_check_error(const lw_error *err)
{
    FUZZ_CHECK(memchr(err->msg, 0, sizeof err->msg) != NULL, "message not terminated");
    FUZZ_CHECK(err->msg[0] != 0, "a refused document must come with a message");
    FUZZ_CHECK(err->code == 2, "error code %d for a bad document: %s", err->code, err->msg);
}

/* A shipped file compiled into the program ("networks/lenet5.json"), so a
 * harness depends neither on the working directory nor on an installed
 * copy. Aborts if it is missing. */
#include "embedded.h"
static inline const char *fuzz_builtin(const char *name, size_t *len)
{
    for (int i = 0; i < lw_embedded_count; i++)
        if (strcmp(lw_embedded_files[i].name, name) == 0) {
            *len = lw_embedded_files[i].len;
            return (const char *)lw_embedded_files[i].data;
        }
    fprintf(stderr, "fuzz: no built-in %s\n", name);
    abort();
}

#endif
