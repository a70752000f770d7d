/*
 * fit_work.c -- the folder `fit` makes its rungs in: made for the run,
 * checked for room before each rung is written (a 30B model's rung is tens
 * of GB: better one line up front than a full disk after an hour of
 * quantizing), emptied and removed at the end; and the chosen rung moved
 * to where the user wants it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/error.h"
#include "eval/fit_run.h"

pocketllm_status pl_fit_make_dir(pl_fit_run *F) {
    const pocketllm_fit_params *p = F->p;
    char parent[4096];
    if (p->work_dir) snprintf(parent, sizeof parent, "%s", p->work_dir);
    else if (p->out_path && strrchr(p->out_path, '/'))
        snprintf(parent, sizeof parent, "%.*s", (int)(strrchr(p->out_path, '/') - p->out_path), p->out_path);
    else if (p->out_path) snprintf(parent, sizeof parent, ".");
    else snprintf(parent, sizeof parent, "%s", getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!parent[0]) snprintf(parent, sizeof parent, "/");
    if ((size_t)snprintf(F->dir, sizeof F->dir, "%s/.pocketllm-fit-XXXXXX", parent) >= sizeof F->dir)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: work folder path too long");
    if (!mkdtemp(F->dir)) {
        pocketllm_status st = pl_fail(POCKETLLM_ERR_IO, "fit: cannot make a work folder in %s: %s", parent, strerror(errno));
        F->dir[0] = 0;
        return st;
    }
    return POCKETLLM_OK;
}

void pl_fit_rung_path(const pl_fit_run *F, const char *recipe, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s.gguf", F->dir, recipe);
}

pocketllm_status pl_fit_room(const pl_fit_run *F, const char *recipe, uint64_t bytes) {
    struct statvfs sv;
    if (statvfs(F->dir, &sv) != 0) return POCKETLLM_OK; /* a file system that cannot say: the write will */
    const uint64_t room = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
    /* a little beyond the file: the log-probabilities and matrix beside it */
    if (room >= bytes + (bytes >> 6) + (16u << 20)) return POCKETLLM_OK;
    return pl_fail(POCKETLLM_ERR_IO, "fit: the work folder %s has %.2f GiB free; the %s rung needs %.2f GiB (free "
                   "some room, point --work-dir elsewhere, or compute the rungs without writing them: --plan)",
                   F->dir, (double)room / (1u << 30), recipe, (double)bytes / (1u << 30));
}

pocketllm_status pl_fit_place(const char *from, const char *to, bool keep) {
    if (!keep && rename(from, to) == 0) return POCKETLLM_OK;
    if (!keep && errno != EXDEV) return pl_fail(POCKETLLM_ERR_IO, "cannot move %s to %s: %s", from, to, strerror(errno));
    char partial[4200];
    snprintf(partial, sizeof partial, "%s.partial", to);
    FILE *in = fopen(from, "rb"), *out = in ? fopen(partial, "wb") : NULL;
    pocketllm_status st = POCKETLLM_OK;
    if (!in || !out) st = pl_fail(POCKETLLM_ERR_IO, "cannot copy %s to %s: %s", from, partial, strerror(errno));
    char *buf = malloc(1 << 16);
    if (!st && !buf) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    size_t n;
    while (!st && (n = fread(buf, 1, 1 << 16, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) st = pl_fail(POCKETLLM_ERR_IO, "cannot write %s: %s", partial, strerror(errno));
    free(buf);
    if (in) fclose(in);
    if (out && fclose(out) != 0 && !st) st = pl_fail(POCKETLLM_ERR_IO, "cannot write %s: %s", partial, strerror(errno));
    if (!st && rename(partial, to) != 0) st = pl_fail(POCKETLLM_ERR_IO, "cannot rename %s: %s", partial, strerror(errno));
    if (st) remove(partial);
    else if (!keep) remove(from);
    return st;
}

void pl_fit_clean(pl_fit_run *F, const char *const *recipes, size_t n) {
    if (!F->dir[0]) return;
    char path[4300];
    for (size_t i = 0; i < n; i++) {
        pl_fit_rung_path(F, recipes[i], path, sizeof path);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/imatrix.gguf", F->dir);
    remove(path);
    remove(F->base);
    rmdir(F->dir);
    F->dir[0] = 0;
}
