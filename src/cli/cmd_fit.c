/*
 * cmd_fit.c -- `pocketllm fit`: the project's answer to "it does not fit".
 * Walks the width ladder from the source checkpoint, measures each rung's
 * memory at the wanted context and (with an evaluation text) its KL
 * divergence from the quality reference, and writes the best rung that
 * fits.  Never offloads, never splits.  With --device the rungs are
 * measured on that device, against its memory; with --plan they are
 * computed, not made (a model too large to quantize here several times).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "eval_common.h"

const char cmd_fit_usage[] =
    "usage: pocketllm fit --model M --memory SIZE [--ctx N] [--eval TEXT [--eval-ctx N] [--eval-chunks N]]\n"
    "                     [--imatrix F] [--out F] [--all] [--work-dir D] [-t N] [--kv T|auto]\n"
    "                     [--machine-memory SIZE] [--mmproj F [--image-max-tokens N]] [--json] [--quiet]\n"
    "       pocketllm fit --model M --memory SIZE --plan [--layers N] [options as above, no --out]\n"
    "       pocketllm fit --model M --device D [--device-memory S] [--memory SIZE] [options as above]\n\n"
    "Fit a model to a device by going down the width ladder -- never by offloading or splitting.\n"
    "The source is quantized to each rung in turn, best first:\n"
    "  Q4: Q4_K_M   Q3: Q3_K_M   Q2: Q2_K   IQ2: IQ2_XS, IQ2_XXS   IQ1: IQ1_M, IQ1_S   ternary: TQ1_0\n"
    "and each rung's memory is measured, not estimated: the file is opened with a session of --ctx\n"
    "positions and one token is run; the need is the file's mapping (the weights are used in\n"
    "place) plus the heap the engine allocated (tokenizer, KV cache, scratch).  The first rung that\n"
    "fits --memory is chosen and written to --out; without --all the walk stops there.  With\n"
    "--eval each rung is also scored on the text against the quality reference, as 'pocketllm\n"
    "perplexity --kl-base' does: mean and 99th-percentile KL divergence, top-1 agreement,\n"
    "perplexity.  The reference is the source when its need fits this machine's memory\n"
    "(--machine-memory, default: all of it), else the best rung that does; the table names it,\n"
    "and rows above it are not scored.  The IQ rungs need an importance matrix: --imatrix, or one\n"
    "collected from the --eval text on the reference (as 'pocketllm imatrix'); without either\n"
    "they are skipped.  Rows of a width that is not a\n"
    "multiple of 256 cannot hold the K/IQ blocks: llama.cpp's recipes then fall back to other\n"
    "types (q5_0, iq4_nl, q8_0, ...), so several rungs can give the same file -- the table says\n"
    "which (\"= RUNG\") and lists every rung's tensor types.  When no rung fits, fit says so and\n"
    "exits 1.\n\n"
    "The source may be f32, f16, bf16 or already quantized (a downloaded Q8_0 or Q4_K_M): the rungs\n"
    "are then requantized from it, as llama-quantize --allow-requantize does -- each loses what the\n"
    "source lost and then its own -- and a rung larger than the source is not made; a quantized\n"
    "source that fits is the answer as it is (copied to --out).  Rungs are made one at a time and\n"
    "removed unless chosen: the disk holds the source and at most two rungs; a rung the work\n"
    "folder has no room for is refused before it is written.\n\n"
    "--plan makes no rung to decide: each rung's file is computed from its quantization plan (the\n"
    "bytes 'pocketllm quantize' would write, to the byte: header and every tensor at its planned\n"
    "type; an IQ recipe without --imatrix planned as made with one, the matrix's few metadata\n"
    "bytes not counted) and its heap is the source's, measured (the session's sizes do not\n"
    "depend on the weights' types).  Every rung is computed; the rows say 'computed'.  --layers N\n"
    "computes the same model at N layers, its layers repeated: a file cut to a few layers of a\n"
    "model (pocketllm synth --n-layer) answers for the whole model, the KV cache and tensor table\n"
    "of the added layers computed.  With --eval each rung of the file as it is (the cut) is still\n"
    "made and scored, against the reference chosen by the computed needs.\n\n"
    "With --device (vulkan, vulkan:N) the device is what must hold the model: the source and\n"
    "every rung are opened there (with --device-memory as the cap, as 'pocketllm run' would open\n"
    "them), and the need is what the device holds after the model, its session of --ctx\n"
    "positions and one token -- the weights uploaded there plus the session's KV cache,\n"
    "activations and logits (the table's 'weights' and 'session'); host memory is not counted.\n"
    "The budget is --memory, at most what the device offers; without --memory, the device's\n"
    "own: --device-memory (or POCKETLLM_DEVICE_MEMORY), else all it reports.  A rung the device\n"
    "refuses (its weights or its session do not fit) is a row that does not fit, its need\n"
    "shown as '> BUDGET'.  The --eval scoring runs on the device too; the source's pass runs on\n"
    "the CPU when the device cannot hold the source.  The rung written then loads with the same\n"
    "--device and --device-memory.\n\n"
    "--kv auto trades the cache's width for the context: a row that does not fit with the\n"
    "asked cache (f16, or -ctk/-ctv given before it) is measured again with a q8_0 cache, then a\n"
    "q4_0 one (K and V, flash attention), and counts with the first that fits -- the context\n"
    "and the rung are kept, the cache narrows first, since a rung down loses a bit a weight.\n"
    "The table's cache column and the closing line say which cache each row has and what the\n"
    "asked one would need; --eval scores each row with its cache.  A model whose heads a block\n"
    "does not divide, or a device without packed caches, keeps the asked cache (a note says so).\n\n"
    "  --model M, -m M   the source checkpoint (f32, f16, bf16, or quantized)\n"
    "  --memory SIZE     the budget: bytes, or 512M, 1.5G, 8GiB ... (1 MiB .. 1 PiB); needed\n"
    "                    unless --device gives one\n"
    "  --ctx N, -c N     positions the KV cache must hold (default: the model's training context,\n"
    "                    at most 4096)\n"
    "  --eval TEXT       score every rung on this text (UTF-8; at least two windows of tokens)\n"
    "  --eval-ctx N      evaluation window (default 512, as llama-perplexity)\n"
    "  --eval-chunks N   score only the first N windows\n"
    "  --imatrix F       importance matrix to quantize with (llama.cpp's GGUF or .dat format)\n"
    "  --mmproj F        a vision tower used beside the model: every row's need adds its weights\n"
    "                    (the file as it is: not quantized along the ladder; measured as the model's)\n"
    "                    and the activations of the largest image (computed from what the tower\n"
    "                    allocates per patch), whose merged tokens are --image-max-tokens (default\n"
    "                    4096, llama.cpp's) at most, and at most the context less its two markers\n"
    "  --image-max-tokens N  the largest image's merged tokens (8..16384)\n"
    "  --out F, -o F     write the chosen rung here\n"
    "  --all             walk every rung, also below the chosen one (the whole table)\n"
    "  --plan            compute every rung's need instead of making it (see above); no --out\n"
    "  --layers N        with --plan: compute the model at N layers (1..512), its layers repeated\n"
    "  --machine-memory SIZE  the memory the quality reference must fit (default: this host's)\n"
    "  --work-dir D      where the rungs are made (default: --out's folder, else $TMPDIR); it\n"
    "                    needs room for two rungs (the chosen one and the one being made)\n"
    "  -t N              threads (default: the physical cores)\n"
    CLI_KV_HELP
    "  --kv auto         narrow the cache (q8_0, then q4_0) before going down a rung (see above)\n"
    "  --flash-attn on|off  attention arithmetic of the sessions (default off; on with a quantized V)\n"
    CLI_DEVICE_HELP
    "  --json            print the table and the choice as one JSON object at the end\n"
    "  --quiet           no progress on stderr\n";

typedef struct fit_cli {
    eval_progress prog;
    bool json, eval, header_done;
    bool device;     /* fitting a device: the table's columns are the device's */
    bool vision;     /* --mmproj: a column for the tower's share */
    uint64_t budget; /* the budget the rungs were held to (the result's) */
    bool kv_auto;    /* --kv auto: a column for each row's cache */
    const pocketllm_fit_result *res; /* the result on_row's rows are in */
} fit_cli;

/* A row's cache, "f16" or "q8_0/f16" (K/V), from the result's arrays. */
static const char *row_cache(const fit_cli *F, const pocketllm_fit_row *r, char *out, size_t cap) {
    const size_t i = (size_t)(r - F->res->rows);
    const uint32_t k = F->res->row_kv_k[i], v = F->res->row_kv_v[i];
    const char *kn = pocketllm_type_name(k), *vn = pocketllm_type_name(v);
    if (k == v) snprintf(out, cap, "%s", kn ? kn : "?");
    else snprintf(out, cap, "%s/%s", kn ? kn : "?", vn ? vn : "?");
    return out;
}

static void progress(void *user, const char *what) {
    fit_cli *F = user;
    eval_progress_line(&F->prog, false, "%s", what);
}

static void on_row(void *user, const pocketllm_fit_row *r) {
    fit_cli *F = user;
    if (F->json) return;
    char a[32], b[32], c[32], kv[40];
    if (!F->header_done) {
        printf("%-8s %-8s %11s %11s ", "rung", "recipe", F->device ? "weights" : "file", F->device ? "session" : "heap");
        if (F->vision) printf("%11s ", "tower");
        if (F->kv_auto) printf("%-9s ", "cache");
        printf("%11s %-4s %-8s %s%s\n", "needs", "fits", "by", F->eval ? "   KL mean     KL 99%  top-1    PPL   " : "",
               "types");
        F->header_done = true;
    }
    if (!r->measured) {
        printf("%-8s %-8s %11s %11s %s%s%11s %-4s %-8s %s%s%s%s\n", r->rung, r->recipe, "-", "-",
               F->vision ? "          - " : "", F->kv_auto ? "-         " : "", "-", "no", "-", F->eval ? "         -          -      -      -   " : "",
               r->types, r->types[0] && r->note ? "  " : "", r->note ? r->note : "");
        fflush(stdout);
        return;
    }
    if (F->device && !r->total_bytes) {
        /* refused by the device: what is known, and a need above the budget */
        char need[40];
        snprintf(need, sizeof need, "> %s", cli_fmt_bytes(r->budget, c, sizeof c));
        printf("%-8s %-8s %11s %11s %s", r->rung, r->recipe,
               r->weights_bytes ? cli_fmt_bytes(r->weights_bytes, a, sizeof a) : "-", "-",
               F->vision ? "          - " : "");
        if (F->kv_auto) printf("%-9s ", row_cache(F, r, kv, sizeof kv));
        printf("%11s %-4s ", need, "no");
    } else {
        printf("%-8s %-8s %11s %11s ", r->rung, r->recipe, cli_fmt_bytes(r->weights_bytes, a, sizeof a),
               cli_fmt_bytes(r->heap_bytes, b, sizeof b));
        if (F->vision) printf("%11s ", cli_fmt_bytes(r->vision_bytes, a, sizeof a));
        if (F->kv_auto) printf("%-9s ", row_cache(F, r, kv, sizeof kv));
        printf("%11s %-4s ", cli_fmt_bytes(r->total_bytes, c, sizeof c), r->fits ? "yes" : "no");
    }
    printf("%-8s ", r->computed ? "computed" : "measured");
    if (F->eval && r->evaluated && r->reference) printf("%-10s %10s %6s %7.3f   ", " reference", "-", "-", r->ppl);
    else if (F->eval && r->evaluated)
        printf("%10.6f %10.6f %5.1f%% %7.3f   ", r->kl_mean, r->kl_p99, 100 * r->top1, r->ppl);
    else if (F->eval) printf("         -          -      -      -   ");
    if (r->same_as) printf("= %s  ", r->same_as);
    printf("%s%s%s\n", r->types, r->note ? "  " : "", r->note ? r->note : "");
    fflush(stdout);
}

static void json_str(const char *s) {
    if (!s) {
        printf("null");
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

static void print_json(const pocketllm_fit_result *res, uint64_t budget, uint32_t ctx, const char *device) {
    printf("{\"memory\": %llu, \"ctx\": %u, ", (unsigned long long)budget, ctx);
    if (device) {
        printf("\"device\": ");
        json_str(device);
        printf(", ");
    }
    if (res->vision_weights_bytes)
        printf("\"vision\": {\"weights_bytes\": %llu, \"image_bytes\": %llu, \"image_tokens\": %u, "
               "\"square_side\": %u}, ",
               (unsigned long long)res->vision_weights_bytes, (unsigned long long)res->vision_image_bytes,
               res->vision_tokens, res->vision_square_side);
    printf("\"machine_memory\": %llu, \"layers\": %u, \"plan_layers\": %u, \"source_quantized\": %s, \"reference\": ",
           (unsigned long long)res->machine_memory, res->n_layer, res->plan_layers,
           res->source_quantized ? "true" : "false");
    json_str(res->reference >= 0 ? res->rows[res->reference].recipe : NULL);
    printf(", \"chosen\": ");
    json_str(res->recipe);
    printf(", \"rows\": [");
    for (uint32_t i = 0; i < res->n_rows; i++) {
        const pocketllm_fit_row *r = &res->rows[i];
        printf("%s\n  {\"recipe\": ", i ? "," : "");
        json_str(r->recipe);
        printf(", \"rung\": ");
        json_str(r->rung);
        printf(", \"measured\": %s, \"computed\": %s, \"reference\": %s, \"file_bytes\": %llu, "
               "\"weights_bytes\": %llu, \"heap_bytes\": %llu, "
               "\"session_bytes\": %llu, \"total_bytes\": %llu, \"fits\": %s",
               r->measured ? "true" : "false", r->computed ? "true" : "false", r->reference ? "true" : "false",
               (unsigned long long)r->file_bytes, (unsigned long long)r->weights_bytes,
               (unsigned long long)r->heap_bytes, (unsigned long long)r->session_bytes,
               (unsigned long long)r->total_bytes, r->fits ? "true" : "false");
        if (res->vision_weights_bytes) printf(", \"vision_bytes\": %llu", (unsigned long long)r->vision_bytes);
        const char *kn = pocketllm_type_name(res->row_kv_k[i]), *vn = pocketllm_type_name(res->row_kv_v[i]);
        printf(", \"cache_type_k\": ");
        json_str(kn);
        printf(", \"cache_type_v\": ");
        json_str(vn);
        printf(", \"asked_cache_bytes\": %llu", (unsigned long long)res->row_asked_bytes[i]);
        if (r->evaluated)
            printf(", \"ppl\": %.17g, \"kl_mean\": %.17g, \"kl_p99\": %.17g, \"top1\": %.17g", r->ppl, r->kl_mean,
                   r->kl_p99, r->top1);
        printf(", \"same_as\": ");
        json_str(r->same_as);
        printf(", \"types\": ");
        json_str(r->types);
        printf(", \"note\": ");
        json_str(r->note);
        printf("}");
    }
    printf("]}\n");
}

/* What the table's numbers are and what its scores are against, in a few
 * lines under it. */
static void explain(const pocketllm_fit_result *res, const char *model, bool eval) {
    char a[32], b[32];
    if (res->source_quantized)
        printf("fit: the source is already quantized: every rung is requantized from it (as llama-quantize "
               "--allow-requantize does: it loses what the source lost, then its own)\n");
    if (res->plan_layers)
        printf("fit: computed, no rung made to decide: each rung's file from its quantization plan (the bytes "
               "'pocketllm quantize' writes), its heap measured on %s at %u layer%s%s\n",
               model, res->n_layer, res->n_layer == 1 ? "" : "s",
               res->plan_layers != res->n_layer ? ", plus the KV cache and tensor table of the added layers" : "");
    if (res->plan_layers && res->plan_layers != res->n_layer)
        printf("fit: the needs are for %u layers (%s's layers repeated)%s\n", res->plan_layers, model,
               eval ? "; the quality is measured on the file itself, at its own layers" : "");
    if (!eval) return;
    if (res->reference < 0) {
        bool too_big = false; /* a row left unscored for the machine, not for the budget */
        for (uint32_t i = 0; i < res->n_rows; i++) {
            const pocketllm_fit_row *r = &res->rows[i];
            too_big |= r->measured && !r->evaluated && r->total_bytes - r->vision_bytes > res->machine_memory;
        }
        if (too_big)
            printf("fit: nothing was scored: neither the source nor a rung walked fits this machine's %s "
                   "(--machine-memory)\n", cli_fmt_bytes(res->machine_memory, a, sizeof a));
        return;
    }
    const pocketllm_fit_row *r = &res->rows[res->reference];
    if (res->reference == 0)
        printf("fit: quality (KL divergence, top-1 agreement) is against the source\n");
    else
        printf("fit: quality (KL divergence, top-1 agreement) is against %s, the best rung that fits this machine's "
               "%s (the source needs %s%s); the importance matrix was collected on it\n",
               r->recipe, cli_fmt_bytes(res->machine_memory, a, sizeof a),
               cli_fmt_bytes(res->rows[0].total_bytes, b, sizeof b), res->rows[0].computed ? ", computed" : "");
}

/* Say why no rung fits (exit 1). */
static int no_fit(const fit_cli *F, const pocketllm_fit_result *res) {
    const char *cmd = "fit";
    char a[32], b[32];
    /* the smallest need among the rungs measured (a rung the device
     * refused has no need to show: it is above the budget) */
    const pocketllm_fit_row *least = NULL;
    bool any_refused = false;
    for (uint32_t i = 1; i < res->n_rows; i++) {
        const pocketllm_fit_row *r = &res->rows[i];
        if (F->device && r->measured && !r->total_bytes) any_refused = true;
        else if (r->measured && (!least || r->total_bytes < least->total_bytes)) least = r;
    }
    cli_fmt_bytes(F->budget, b, sizeof b);
    if (least)
        return cli_error(cmd, "does not fit: the smallest rung, %s, needs %s%s; the budget is %s (PocketLLM "
                         "quantizes, it never offloads or splits)", least->recipe,
                         cli_fmt_bytes(least->total_bytes, a, sizeof a), least->computed ? " (computed)" : "", b);
    if (any_refused)
        return cli_error(cmd, "does not fit: the device refused every rung tried (each needs more than the budget "
                         "of %s; PocketLLM quantizes, it never offloads or splits)", b);
    if (!res->rows[0].measured)
        return cli_error(cmd, "does not fit: %s", res->rows[0].note ? res->rows[0].note : "nothing could be measured");
    return cli_error(cmd, "does not fit: the tokenizer and a session of this context alone need %s; the budget "
                     "is %s", cli_fmt_bytes(res->rows[0].heap_bytes, a, sizeof a), b);
}

int cmd_fit(int argc, char **argv) {
    const char *cmd = "fit";
    const char *model = NULL, *eval = NULL, *v, *err = NULL;
    pocketllm_fit_params p = pocketllm_fit_default_params();
    int flash = -1, kvrc = 0;
    fit_cli F = {{cmd, false, 0}, false, false, false, false, false, 0, false, NULL};
    bool have_memory = false;
    int64_t n;
    cli_device dev = {NULL, 0};
    int drc = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_opt_device(argc, argv, &i, cmd, &dev, &drc)) {
            if (drc) return drc;
        } else if (cli_opt(argc, argv, &i, "--model", &v, &err) || cli_opt(argc, argv, &i, "-m", &v, &err)) {
            if (err) return cli_usage(cmd, "--model %s", err);
            model = v;
        } else if (cli_opt(argc, argv, &i, "--memory", &v, &err)) {
            if (err) return cli_usage(cmd, "--memory %s", err);
            if (!cli_parse_size(v, &p.memory) || p.memory < (1ull << 20) || p.memory > (1ull << 50))
                return cli_usage(cmd, "--memory wants a size from 1 MiB to 1 PiB (e.g. 512M, 1.5G), not '%s'", v);
            have_memory = true;
        } else if (cli_opt(argc, argv, &i, "--ctx", &v, &err) || cli_opt(argc, argv, &i, "-c", &v, &err)) {
            if (err) return cli_usage(cmd, "--ctx %s", err);
            if (!cli_parse_i64(v, 1, 1 << 20, &n)) return cli_usage(cmd, "--ctx wants 1..1048576 positions, not '%s'", v);
            p.n_ctx = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--eval", &v, &err)) {
            if (err) return cli_usage(cmd, "--eval %s", err);
            eval = v;
        } else if (cli_opt(argc, argv, &i, "--eval-ctx", &v, &err)) {
            if (err) return cli_usage(cmd, "--eval-ctx %s", err);
            if (!cli_parse_i64(v, 16, 1 << 20, &n)) return cli_usage(cmd, "--eval-ctx wants 16..1048576 tokens, not '%s'", v);
            p.eval_ctx = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--eval-chunks", &v, &err)) {
            if (err) return cli_usage(cmd, "--eval-chunks %s", err);
            if (!cli_parse_i64(v, 1, 1 << 30, &n)) return cli_usage(cmd, "--eval-chunks wants a window count, not '%s'", v);
            p.eval_chunks = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--imatrix", &v, &err)) {
            if (err) return cli_usage(cmd, "--imatrix %s", err);
            p.imatrix = v;
        } else if (cli_opt(argc, argv, &i, "--out", &v, &err) || cli_opt(argc, argv, &i, "-o", &v, &err)) {
            if (err) return cli_usage(cmd, "--out %s", err);
            p.out_path = v;
        } else if (cli_opt(argc, argv, &i, "--work-dir", &v, &err)) {
            if (err) return cli_usage(cmd, "--work-dir %s", err);
            p.work_dir = v;
        } else if (cli_opt(argc, argv, &i, "-t", &v, &err) || cli_opt(argc, argv, &i, "--threads", &v, &err)) {
            if (err) return cli_usage(cmd, "-t %s", err);
            if (!cli_parse_i64(v, 1, 1024, &n)) return cli_usage(cmd, "-t wants a thread count 1..1024, not '%s'", v);
            p.n_threads = (int)n;
        } else if (!strcmp(argv[i], "--kv") && i + 1 < argc && !strcmp(argv[i + 1], "auto")) {
            p.kv_auto = 1;
            F.kv_auto = true;
            i++;
        } else if (cli_opt_kv(argc, argv, &i, cmd, &p.kv_type, &p.kv_type_v, &kvrc)) {
            if (kvrc) return kvrc;
        } else if (cli_opt_flash(argc, argv, &i, cmd, &flash, &kvrc)) {
            if (kvrc) return kvrc;
        } else if (cli_opt(argc, argv, &i, "--mmproj", &v, &err)) {
            if (err) return cli_usage(cmd, "--mmproj %s", err);
            p.mmproj = v;
            F.vision = true;
        } else if (cli_opt(argc, argv, &i, "--image-max-tokens", &v, &err)) {
            if (err) return cli_usage(cmd, "--image-max-tokens %s", err);
            if (!cli_parse_i64(v, 8, 1 << 14, &n)) return cli_usage(cmd, "--image-max-tokens wants 8..16384, not '%s'", v);
            p.image_max_tokens = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--layers", &v, &err)) {
            if (err) return cli_usage(cmd, "--layers %s", err);
            if (!cli_parse_i64(v, 1, 512, &n)) return cli_usage(cmd, "--layers wants 1..512 layers, not '%s'", v);
            p.plan_layers = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--machine-memory", &v, &err)) {
            if (err) return cli_usage(cmd, "--machine-memory %s", err);
            if (!cli_parse_size(v, &p.machine_memory) || p.machine_memory < (1ull << 20) || p.machine_memory > (1ull << 50))
                return cli_usage(cmd, "--machine-memory wants a size from 1 MiB to 1 PiB (e.g. 24G), not '%s'", v);
        } else if (!strcmp(argv[i], "--plan")) {
            p.plan = 1;
        } else if (!strcmp(argv[i], "--all")) {
            p.all = 1;
        } else if (!strcmp(argv[i], "--json")) {
            F.json = true;
        } else if (!strcmp(argv[i], "--quiet")) {
            F.prog.quiet = true;
        } else {
            return cli_usage(cmd, "unknown argument '%s'", argv[i]);
        }
    }
    if (!model) return cli_usage(cmd, "needs --model");
    pocketllm_model_params dp = pocketllm_model_default_params();
    if ((drc = cli_device_params(cmd, &dev, &dp))) return drc;
    F.device = dp.device && strcmp(dp.device, "cpu") != 0;
    if (F.device) {
        p.device = dp.device;
        p.device_memory = dp.device_memory;
    } else if (dev.memory) {
        /* (POCKETLLM_DEVICE_MEMORY alone is no mistake: it is for devices) */
        return cli_usage(cmd, "--device-memory goes with --device (the host's budget is --memory)");
    }
    if (!have_memory && !F.device) return cli_usage(cmd, "needs --memory SIZE (or --device D)");
    if ((p.eval_ctx || p.eval_chunks) && !eval) return cli_usage(cmd, "--eval-ctx and --eval-chunks go with --eval");
    if (p.image_max_tokens && !p.mmproj) return cli_usage(cmd, "--image-max-tokens goes with --mmproj");
    if (p.plan_layers && !p.plan) return cli_usage(cmd, "--layers goes with --plan");
    if (p.plan && p.kv_auto)
        return cli_usage(cmd, "--kv auto measures the narrower caches, which --plan does not do: leave out --plan, "
                         "or name the cache with --kv T");
    if (p.plan && p.out_path) return cli_usage(cmd, "--plan writes no rung: leave out --out (without --plan fit makes "
                                                     "and writes it)");
    if (p.plan && F.device) return cli_usage(cmd, "--plan computes the host's need: with --device fit measures each "
                                                  "rung on the device (leave out --plan)");

    char *text = NULL;
    size_t len = 0;
    if (eval && !(text = eval_read_text(eval, &len)))
        return cli_error(cmd, "cannot read %s: %s", eval, errno == EFBIG ? "larger than 256 MiB" : strerror(errno));
    F.eval = text != NULL;
    p.eval_text = text;
    p.eval_len = len;
    p.on_row = on_row;
    p.progress = progress;
    p.user = &F;
    pocketllm_fit_result res;
    F.res = &res;
    p.flash_attn = cli_flash_auto(flash, p.kv_type, p.kv_type_v);
    pocketllm_status st = pocketllm_fit(model, &p, &res);
    free(text);
    if (st) return cli_lib_error(cmd, st);
    F.budget = res.budget; /* on a device the library settles it */
    if (F.json) print_json(&res, F.budget, res.n_ctx, F.device ? p.device : NULL);
    char a[32], b[32];
    if (!F.json && p.mmproj) {
        printf("fit: the tower column is the vision tower %s, the same in every row (counted as the file is; "
               "'pocketllm quantize' makes a smaller one): %s of weights + %s for the largest image, %u tokens "
               "(up to %ux%u pixels; --image-max-tokens and the context bound it)\n",
               p.mmproj, cli_fmt_bytes(res.vision_weights_bytes, a, sizeof a),
               cli_fmt_bytes(res.vision_image_bytes, b, sizeof b), res.vision_tokens, res.vision_square_side,
               res.vision_square_side);
    }
    if (!F.json) explain(&res, model, F.eval);
    if (res.chosen < 0) return no_fit(&F, &res);
    const pocketllm_fit_row *c = &res.rows[res.chosen];
    if (!F.json && res.chosen == 0) {
        printf("fit: the source fits as it is (it is quantized already): it needs %s of %s at %u positions%s%s%s\n",
               cli_fmt_bytes(c->total_bytes, a, sizeof a), cli_fmt_bytes(F.budget, b, sizeof b), res.n_ctx,
               c->computed ? " (computed)" : "", p.out_path ? "; copied to " : "", p.out_path ? p.out_path : "");
    } else if (!F.json) {
        printf("fit: %s (%s) needs %s of %s at %u positions%s%s%s\n", c->recipe, c->rung,
               cli_fmt_bytes(c->total_bytes, a, sizeof a), cli_fmt_bytes(F.budget, b, sizeof b), res.n_ctx,
               c->computed ? " (computed)" : "", p.out_path ? "; written to " : "", p.out_path ? p.out_path : "");
        if (res.rows[0].fits)
            printf("fit: (the source fits too, as it is: it needs %s%s)\n",
                   cli_fmt_bytes(res.rows[0].total_bytes, a, sizeof a), res.rows[0].computed ? ", computed" : "");
    }
    if (!F.json && res.row_asked_bytes[res.chosen]) {
        char kv[40], asked[40];
        const char *kn = pocketllm_type_name(p.kv_type);
        const char *vn = pocketllm_type_name(p.kv_type_v == POCKETLLM_KV_AS_K ? p.kv_type : p.kv_type_v);
        if (!strcmp(kn, vn)) snprintf(asked, sizeof asked, "%s", kn);
        else snprintf(asked, sizeof asked, "%s/%s", kn, vn);
        printf("fit: chose a %s cache to keep %s and the %u positions: with the asked %s cache it needs %s, "
               "more than the budget; run it with --kv %s\n",
               row_cache(&F, c, kv, sizeof kv), c->recipe, res.n_ctx, asked,
               cli_fmt_bytes(res.row_asked_bytes[res.chosen], b, sizeof b), kv);
    }
    return CLI_OK;
}
