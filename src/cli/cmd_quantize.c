/*
 * cmd_quantize.c -- `pocketllm quantize`: rewrite a checkpoint with its
 * matrices quantized to a llama.cpp recipe or to one tensor type, with
 * progress on stderr.  All the work is pocketllm_quantize().
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

typedef struct progress_state {
    struct timespec start;
    bool tty;
    int last_pct;  /* non-tty: the last multiple of 10% printed */
} progress_state;

static double elapsed(const progress_state *ps) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - ps->start.tv_sec) + (double)(now.tv_nsec - ps->start.tv_nsec) * 1e-9;
}

static void progress(void *user, const pocketllm_quantize_progress *p) {
    progress_state *ps = user;
    int pct = p->bytes_total ? (int)(p->bytes_done * 100 / p->bytes_total) : 100;
    if (ps->tty) {
        fprintf(stderr, "\rquantize: %3d%%  [%llu/%llu] %-40.40s %s -> %-7s %6.1f s\033[K", pct,
                (unsigned long long)p->tensor, (unsigned long long)p->n_tensors, p->name,
                pocketllm_type_name(p->from_type), pocketllm_type_name(p->to_type), elapsed(ps));
        if (p->tensor == p->n_tensors) fputc('\n', stderr);
        return;
    }
    /* a log: a line every 10%, and only for runs big enough to wait for */
    if (p->bytes_total < (64u << 20) || pct / 10 == ps->last_pct / 10) return;
    ps->last_pct = pct;
    fprintf(stderr, "quantize: %3d%%  %llu of %llu tensors  %.1f s\n", pct, (unsigned long long)p->tensor,
            (unsigned long long)p->n_tensors, elapsed(ps));
}

/* --dry-run: one line per tensor on stdout, llama-quantize's plan. */
static void plan_line(void *user, const pocketllm_quantize_progress *p) {
    (void)user;
    printf("%-40s %-8s -> %s\n", p->name, pocketllm_type_name(p->from_type), pocketllm_type_name(p->to_type));
    if (p->tensor == p->n_tensors) {
        char a[32], b[32];
        printf("total: %llu tensors, %s -> %s\n", (unsigned long long)p->n_tensors,
               cli_fmt_bytes(p->bytes_total, a, sizeof a), cli_fmt_bytes(p->out_bytes_done, b, sizeof b));
    }
}

/* The accepted TYPE names, for the message about an unknown one. */
static void list_names(FILE *f) {
    for (int want = 1; want >= 0; want--) {
        fprintf(f, want ? "  recipes:" : "  types:  ");
        int is_recipe;
        const char *name;
        for (uint32_t i = 0; (name = pocketllm_quantize_name(i, &is_recipe, NULL)); i++)
            if (is_recipe == want) fprintf(f, " %s", name);
        fputc('\n', f);
    }
}

int cmd_quantize(int argc, char **argv) {
    pocketllm_quantize_params p = pocketllm_quantize_default_params();
    const char *pos[3] = {NULL, NULL, NULL}, *err = NULL, *v;
    int n_pos = 0;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        int64_t n;
        if (!strcmp(argv[i], "--pure")) p.pure = 1;
        else if (!strcmp(argv[i], "--leave-output")) p.leave_output = 1;
        else if (!strcmp(argv[i], "--allow-requantize")) p.allow_requantize = 1;
        else if (!strcmp(argv[i], "--quiet")) quiet = true;
        else if (!strcmp(argv[i], "--dry-run")) p.dry_run = 1;
        else if (cli_opt(argc, argv, &i, "--imatrix", &v, &err)) p.imatrix = v;
        else if (cli_opt(argc, argv, &i, "-t", &v, &err) || cli_opt(argc, argv, &i, "--threads", &v, &err)) {
            if (v && !cli_parse_i64(v, 1, 1024, &n)) return cli_usage("quantize", "bad thread count '%s'", v);
            if (v) p.n_threads = (int)n;
        } else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("quantize", "unknown option '%s'", argv[i]);
        else if (n_pos == 3) return cli_usage("quantize", "takes IN OUT TYPE, got a fourth argument '%s'", argv[i]);
        else pos[n_pos++] = argv[i];
        if (err) return cli_usage("quantize", "%s %s", argv[i], err);
    }
    /* a dry run writes nothing: IN TYPE will do */
    if (p.dry_run && n_pos == 2) {
        pos[2] = pos[1];
        pos[1] = NULL;
        n_pos = 3;
    }
    if (n_pos < 3) return cli_usage("quantize", "needs IN OUT TYPE");
    p.type = pos[2];
    if (!pocketllm_quantize_type_known(p.type)) {
        fprintf(stderr, "pocketllm quantize: unknown type '%s'; TYPE is one of (recipes as llama-quantize spells them, "
                        "or one tensor type for every matrix):\n", p.type);
        list_names(stderr);
        return CLI_USAGE;
    }
    progress_state ps = {.tty = isatty(2), .last_pct = 0};
    clock_gettime(CLOCK_MONOTONIC, &ps.start);
    if (p.dry_run) {
        p.progress = plan_line;
    } else if (!quiet) {
        p.progress = progress;
        p.progress_user = &ps;
    }
    pocketllm_status st = pocketllm_quantize(pos[0], pos[1], &p);
    if (st) {
        if (!quiet && !p.dry_run && ps.tty) fputc('\n', stderr);
        return cli_lib_error("quantize", st);
    }
    if (!quiet && !p.dry_run) {
        struct stat si, so;
        char a[32], b[32];
        if (stat(pos[0], &si) == 0 && stat(pos[1], &so) == 0)
            fprintf(stderr, "quantize: wrote %s (%s): %s -> %s in %.1f s\n", pos[1], p.type,
                    cli_fmt_bytes((uint64_t)si.st_size, a, sizeof a), cli_fmt_bytes((uint64_t)so.st_size, b, sizeof b),
                    elapsed(&ps));
    }
    return CLI_OK;
}
