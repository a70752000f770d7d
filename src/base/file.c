/*
 * file.c -- whole-file reads with size limits and one-line errors.
 */
#include "base/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"

pocketllm_status pl_read_file(const char *path, size_t max_bytes, char **data, size_t *len) {
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return pl_fail(POCKETLLM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return pl_fail(POCKETLLM_ERR_IO, "%s: not a regular file", path);
    }
    if ((unsigned long long)sb.st_size > max_bytes) {
        fclose(f);
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%s: %lld bytes is more than the %zu allowed", path,
                       (long long)sb.st_size, max_bytes);
    }
    size_t n = (size_t)sb.st_size;
    char *p = malloc(n + 1);
    if (!p) {
        fclose(f);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "%s: out of memory for %zu bytes", path, n);
    }
    if (n && fread(p, 1, n, f) != n) {
        int e = errno;
        free(p);
        fclose(f);
        return pl_fail(POCKETLLM_ERR_IO, "%s: read failed: %s", path, strerror(e));
    }
    fclose(f);
    p[n] = '\0';
    *data = p;
    *len = n;
    return POCKETLLM_OK;
}
