/*
 * replay_main: a main() for the libFuzzer harnesses (tests/fuzz_*.c), so
 * that any C compiler builds them and `make fuzz-replay` (part of `make
 * test`, under ASan+UBSan) runs each one over its seed corpus and the
 * regression inputs — every harness's properties checked on the shipped
 * networks, clusters and fixtures without clang or a fuzzing run.
 *
 *   build/fuzz-replay/fuzz_net FILE|DIR...   (directories are read recursively)
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static long n_inputs;

static void replay(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz-replay: %s: no such file\n", path);
        exit(1);
    }
    if (S_ISDIR(st.st_mode)) {
        struct dirent **names;
        int n = scandir(path, &names, NULL, alphasort);
        for (int i = 0; i < n; i++) {
            if (names[i]->d_name[0] != '.') {
                char sub[4096];
                snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name);
                replay(sub);
            }
            free(names[i]);
        }
        free(names);
        return;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz-replay: %s: cannot open\n", path);
        exit(1);
    }
    uint8_t *buf = malloc((size_t)st.st_size + 1);
    size_t len = fread(buf, 1, (size_t)st.st_size, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    n_inputs++;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) replay(argv[i]);
    printf("%s: %ld inputs\n", argv[0], n_inputs);
    return 0;
}
