/*
 * srv_model.h -- the model a server (or `pocketllm chat`) serves: the open
 * checkpoint, its chat template and the special-token texts the template
 * is given, the name clients see, the context each sequence may use, and
 * the towers (vision, audio) when images or audio are accepted.
 */
#ifndef PL_SRV_MODEL_H
#define PL_SRV_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "pocketllm.h"

typedef struct srv_model {
    pocketllm_model *model;
    pocketllm_chat_template *tmpl; /* NULL: the model has no chat template */
    pocketllm_chat_caps caps;      /* what the template says: think blocks, the tool-call format */
    char *bos_text, *eos_text;     /* the BOS/EOS tokens' text, NULL when none */
    char *id;                      /* the model's name in the API */
    int64_t created;               /* the file's modification time */
    uint32_t n_ctx;                /* positions one sequence may fill */
    int32_t n_vocab;               /* token ids are 0..n_vocab-1 */
    pocketllm_mmproj *mm;          /* the towers (--mmproj); NULL: text only */
    bool has_vision, has_audio;    /* which towers mm holds: image_url / input_audio parts taken */
    char *image_dir;               /* --allow-image-path as a real path; NULL: no file:// images */
} srv_model;

typedef struct srv_model_params {
    const char *path;
    const char *template_path; /* a .jinja file instead of the model's template; NULL: the model's */
    const char *name;          /* the API name; NULL: the file name without .gguf */
    uint32_t n_ctx;            /* 0: the model's training context, at most 4096 */
    int n_threads;
    int vocab_only;            /* tokenizer only (tests, fuzzing) */
    /* the device the weights go to, as pocketllm_model_params has them:
     * NULL or "cpu", "vulkan", "vulkan:N"; the sessions the scheduler makes
     * run there too (they follow the model) */
    const char *device;
    uint64_t device_memory;    /* the most bytes of the device to use; 0 = all it has */
    void (*progress)(void *user, const char *what, uint64_t done, uint64_t total); /* the upload; may be NULL */
    void *progress_user;
    const char *mmproj_path;   /* a vision tower (mmproj GGUF) for the model; NULL: none */
    uint32_t image_min_tokens, image_max_tokens; /* its token budget per image (0: the defaults) */
    const char *image_dir;     /* the folder file:// image URLs may read from; NULL: none */
} srv_model_params;

/* Open everything; on failure *err gets a one-line message (caller frees). */
pocketllm_status srv_model_open(const srv_model_params *p, srv_model *out, char **err);
void srv_model_close(srv_model *m);
/* The name a model file goes by in the API: its file name without the
 * folder and without .gguf (malloc'd; NULL when out of memory). */
char *srv_model_name_from_path(const char *path);

#endif
