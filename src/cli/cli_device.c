/*
 * cli_device.c -- the device options every command that opens a model
 * shares: --device cpu|vulkan|vulkan:N, --device-memory SIZE (or the
 * environment's POCKETLLM_DEVICE_MEMORY) to play a smaller device, and the
 * progress line of a long weight upload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "srv_model.h"

bool cli_opt_device(int argc, char **argv, int *i, const char *cmd, cli_device *d, int *rc) {
    const char *v = NULL, *err = NULL;
    *rc = 0;
    if (cli_opt(argc, argv, i, "--device", &v, &err)) {
        if (err) *rc = cli_usage(cmd, "--device %s", err);
        else if (strcmp(v, "cpu") && strcmp(v, "vulkan") && strncmp(v, "vulkan:", 7))
            *rc = cli_usage(cmd, "--device wants cpu, vulkan or vulkan:N, not '%s'", v);
        else d->name = v;
        return true;
    }
    if (cli_opt(argc, argv, i, "--device-memory", &v, &err)) {
        if (err) *rc = cli_usage(cmd, "--device-memory %s", err);
        else if (!cli_parse_size(v, &d->memory) || d->memory < ((uint64_t)1 << 20))
            *rc = cli_usage(cmd, "--device-memory wants a size of at least 1M (512M, 4G, ...), not '%s'", v);
        return true;
    }
    return false;
}

/* The upload's progress on stderr: a line rewritten in place on a
 * terminal, a line per quarter otherwise; nothing for small models. */
static void progress(void *user, const char *what, uint64_t done, uint64_t total) {
    int *last = user;
    if (total < ((uint64_t)256 << 20)) return;
    const int pct = (int)(done * 100 / total);
    char a[32], b[32];
    if (isatty(2)) {
        fprintf(stderr, "\rloading weights onto %s: %s of %s (%d%%)%s", what, cli_fmt_bytes(done, a, sizeof a),
                cli_fmt_bytes(total, b, sizeof b), pct, done == total ? "\n" : "");
    } else if (pct / 25 != *last / 25 || done == total) {
        if (done == total || pct / 25 > *last / 25)
            fprintf(stderr, "loading weights onto %s: %s of %s (%d%%)\n", what, cli_fmt_bytes(done, a, sizeof a),
                    cli_fmt_bytes(total, b, sizeof b), pct);
    }
    *last = pct;
}

static int progress_state = -1;

int cli_device_params(const char *cmd, const cli_device *d, pocketllm_model_params *mp) {
    mp->device = d->name;
    mp->device_memory = d->memory;
    if (!mp->device_memory) {
        const char *env = getenv("POCKETLLM_DEVICE_MEMORY");
        if (env && *env && (!cli_parse_size(env, &mp->device_memory) || mp->device_memory < ((uint64_t)1 << 20)))
            return cli_usage(cmd, "POCKETLLM_DEVICE_MEMORY wants a size of at least 1M, not '%s'", env);
    }
    mp->progress = progress;
    mp->progress_user = &progress_state;
    return 0;
}

int cli_device_srv_params(const char *cmd, const cli_device *d, srv_model_params *mp) {
    pocketllm_model_params p = pocketllm_model_default_params();
    const int rc = cli_device_params(cmd, d, &p);
    mp->device = p.device;
    mp->device_memory = p.device_memory;
    mp->progress = p.progress;
    mp->progress_user = p.progress_user;
    return rc;
}

const char *cli_device_suffix(const pocketllm_model *m) {
    static char buf[340];
    const char *name = pocketllm_model_device(m, NULL, NULL);
    if (!strcmp(name, "cpu")) return "";
    snprintf(buf, sizeof buf, ", on %s", name);
    return buf;
}
