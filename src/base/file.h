/*
 * file.h -- whole-file reads for inputs that are not mapped (text files,
 * imatrix data, prompts), with the library's error reporting.
 */
#ifndef PL_FILE_H
#define PL_FILE_H

#include <stddef.h>

#include "pocketllm.h"

/* Read a whole file; *data is NUL-terminated (not counted in *len) and must
 * be freed by the caller.  Refuses files larger than max_bytes. */
pocketllm_status pl_read_file(const char *path, size_t max_bytes, char **data, size_t *len);

#endif
