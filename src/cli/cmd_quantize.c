/*
 * cmd_quantize.c -- `pocketllm quantize`: rewrite a checkpoint with its
 * matrices quantized to a llama.cpp recipe or to one tensor type, with
 * progress on stderr.  All the work is pocketllm_quantize().  Its help text
 * is here (commands.h refers to it).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

const char cmd_quantize_usage[] =
    "usage: pocketllm quantize IN.gguf OUT.gguf TYPE [--pure] [--leave-output] [--imatrix FILE]\n"
    "                          [--allow-requantize] [-t N] [--quiet]\n"
    "       pocketllm quantize --dry-run IN.gguf TYPE [options]\n\n"
    "Rewrite an f32/f16/bf16 checkpoint with its matrices quantized, choosing each tensor's type as\n"
    "llama.cpp's llama-quantize does; the quantized bytes equal llama.cpp's for the same rows, so\n"
    "files from either tool are interchangeable.  Norms and other 1-D tensors stay as they are.\n"
    "Metadata is copied; general.file_type and general.quantization_version are set.  The input\n"
    "is read tensor by tensor and the output streamed; nothing is left at OUT on failure.\n\n"
    "TYPE is a recipe as llama-quantize spells it (no lower-case letter): Q8_0 Q6_K Q5_K_M Q5_K_S\n"
    "Q5_1 Q5_0 Q4_K_M Q4_K_S Q4_1 Q4_0 IQ4_XS IQ4_NL Q3_K_L Q3_K_M Q3_K_S IQ3_M IQ3_S IQ3_XS\n"
    "IQ3_XXS Q2_K Q2_K_S IQ2_M IQ2_S IQ2_XS IQ2_XXS IQ1_M IQ1_S TQ2_0 TQ1_0 Q2_0 Q1_0 MXFP4_MOE F16\n"
    "BF16 F32 (aliases Q5_K, Q4_K, Q3_K = the _M recipes); or a tensor type as ggml spells it\n"
    "(with a lower-case letter: q4_K, q8_0, iq4_nl, ...), which puts every quantizable tensor in\n"
    "that type (as --pure).  An unknown TYPE lists the valid names.\n\n"
    "An mmproj (a vision tower: general.architecture clip) is quantized as llama-quantize does it:\n"
    "the blocks' matrices, the DeepStack mergers and the merger get TYPE; the patch embedding, the\n"
    "position table, norms and biases stay.  A recipe runs llama.cpp's rule with no layer count\n"
    "(Q4_K_M: ffn_down and some attn_qkv in q6_K, the rest q4_K); --dry-run shows the plan.\n\n"
    "A mixture-of-experts checkpoint (qwen3moe, qwen2moe, ...) is quantized as llama-quantize does\n"
    "it: each 3-D expert tensor (ffn_gate_exps, ffn_up_exps, ffn_down_exps) expert by expert, with\n"
    "that expert's row of the importance matrix; the router (ffn_gate_inp) stays as it is; qwen2moe's\n"
    "shared expert (*_shexp) is a plain FFN.  The recipes' choices depend on the expert count as\n"
    "llama.cpp's do: with 8 (Mixtral's) attn_v and attn_k get q8_0 (q4_K under the IQ1/IQ2 recipes)\n"
    "and attn_output q5_K up to Q4_K_M; with 4 or more attn_v gets q4_K under the IQ1/IQ2 recipes; an\n"
    "expert tensor's layer is read from its name.  A file whose expert tensors or router disagree\n"
    "with {arch}.expert_count, whose expert_used_count is 0 or above it, or with a 3-D tensor where a\n"
    "matrix belongs, is refused; so is an importance matrix whose rows do not line up with the\n"
    "experts.\n\n"
    "  --pure              no per-tensor mixture: the recipe's base type everywhere\n"
    "  --leave-output      keep output.weight as it is\n"
    "  --imatrix FILE      importance matrix (llama.cpp's GGUF imatrix or legacy .dat); required by\n"
    "                      IQ1_*, IQ2_*, IQ3_XXS, IQ3_XS and Q2_K_S, used by the others\n"
    "  --allow-requantize  let an already quantized tensor change type (default: refused; tensors\n"
    "                      already in their target type are copied either way)\n"
    "  -t N, --threads N   worker threads (default: the physical cores)\n"
    "  --dry-run           write nothing; list every tensor's type and the sizes on stdout (types\n"
    "                      this build cannot encode yet are listed, not refused)\n"
    "  --quiet             no progress or summary on stderr\n";

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
