/*
 * cmd_logits.c -- `pocketllm logits`: evaluate a prompt (text or ids) and
 * write the float32 logits of every position, row-major (positions x
 * vocabulary), for comparisons with other engines.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "run_common.h"

int cmd_logits(int argc, char **argv) {
    run_common c;
    run_common_defaults(&c);
    const char *out = NULL, *v, *err = NULL;
    for (int i = 1; i < argc; i++) {
        int r = run_common_opt(argc, argv, &i, &c, "logits");
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        if (cli_opt(argc, argv, &i, "--out", &v, &err) || cli_opt(argc, argv, &i, "-o", &v, &err)) {
            if (err) return cli_usage("logits", "--out %s", err);
            out = v;
        } else {
            return cli_usage("logits", "unknown argument '%s'", argv[i]);
        }
    }
    int rc = run_common_check(&c, "logits");
    if (rc) return rc;
    if (!out) return cli_usage("logits", "needs --out FILE");

    run_state rs;
    if ((rc = run_common_open(&c, &rs, "logits"))) return rc;
    pocketllm_status st = pocketllm_session_eval(rs.session, rs.prompt, rs.n_prompt, 1);
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
