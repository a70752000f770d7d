/*
 * cmd_logits.c -- `pocketllm logits`: evaluate a prompt (text or ids) and
 * write the float32 logits of every position, row-major (positions x
 * vocabulary), for comparisons with other engines; with --routing, a
 * mixture of experts' router choices too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "run_common.h"

/* --routing: one "POS LAYER E1 .. Ek" line per position and MoE layer. */
typedef struct routing_out {
    FILE *f;
    int64_t pass0, next, pass_len; /* where the current pass starts, the next one, its length */
} routing_out;

static void routing_line(void *user, int32_t layer, int32_t n_tok, int32_t n_used, const int32_t *ids,
                         const float *weights) {
    (void)weights;
    routing_out *r = user;
    if (layer == 0) r->pass0 = r->next, r->pass_len = n_tok, r->next += n_tok;
    /* a layer that saw fewer tokens saw the pass's last ones */
    const int64_t first = r->pass0 + r->pass_len - n_tok;
    for (int32_t t = 0; t < n_tok; t++) {
        fprintf(r->f, "%lld %d", (long long)(first + t), (int)layer);
        for (int32_t j = 0; j < n_used; j++) fprintf(r->f, " %d", (int)ids[t * n_used + j]);
        fputc('\n', r->f);
    }
}

int cmd_logits(int argc, char **argv) {
    run_common c;
    run_common_defaults(&c);
    const char *out = NULL, *routing = NULL, *v, *err = NULL;
    for (int i = 1; i < argc; i++) {
        int r = run_common_opt(argc, argv, &i, &c, "logits");
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        if (cli_opt(argc, argv, &i, "--out", &v, &err) || cli_opt(argc, argv, &i, "-o", &v, &err)) {
            if (err) return cli_usage("logits", "--out %s", err);
            out = v;
        } else if (cli_opt(argc, argv, &i, "--routing", &v, &err)) {
            if (err) return cli_usage("logits", "--routing %s", err);
            routing = v;
        } else {
            return cli_usage("logits", "unknown argument '%s'", argv[i]);
        }
    }
    int rc = run_common_check(&c, "logits");
    if (rc) return rc;
    if (!out) return cli_usage("logits", "needs --out FILE");

    run_state rs;
    if ((rc = run_common_open(&c, &rs, "logits"))) return rc;
    routing_out ro = {NULL, 0, 0, 0};
    if (routing && !(ro.f = fopen(routing, "w"))) {
        rc = cli_error("logits", "cannot create %s: %s", routing, strerror(errno));
        run_common_close(&rs);
        return rc;
    }
    if (ro.f) pocketllm_session_set_route_observer(rs.session, routing_line, &ro);
    pocketllm_status st = pocketllm_session_eval(rs.session, rs.prompt, rs.n_prompt, 1);
    if (ro.f && fclose(ro.f) != 0 && !st) {
        rc = cli_error("logits", "cannot write %s: %s", routing, strerror(errno));
        run_common_close(&rs);
        return rc;
    }
    if (st) {
        rc = cli_lib_error("logits", st);
        run_common_close(&rs);
        return rc;
    }
    FILE *f = fopen(out, "wb");
    if (!f) {
        rc = cli_error("logits", "cannot create %s: %s", out, strerror(errno));
        run_common_close(&rs);
        return rc;
    }
    bool ok = true;
    for (size_t i = 0; i < rs.n_prompt && ok; i++)
        ok = fwrite(pocketllm_session_logits(rs.session, (int32_t)i), sizeof(float), (size_t)rs.n_vocab, f) ==
             (size_t)rs.n_vocab;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        rc = cli_error("logits", "cannot write %s: %s", out, strerror(errno));
        remove(out);
    } else {
        printf("%zu %d\n", rs.n_prompt, rs.n_vocab);
    }
    run_common_close(&rs);
    return rc;
}
