/*
 * pocketllm.h -- the whole public C interface of the PocketLLM engine.
 *
 * Everything libpocketllm.so exports is declared here; nothing else is
 * visible from outside the library.  Handles are opaque.  Every function that
 * can fail returns a pocketllm_status; on failure a one-line message saying
 * what went wrong (and where, for file errors: the byte offset) is available
 * from pocketllm_last_error() on the same thread until the next failing call.
 *
 * Versioning: POCKETLLM_ABI_MAJOR changes when a change breaks existing
 * callers (a removed function, a changed struct layout); POCKETLLM_ABI_MINOR
 * changes when functions are added.  A program compiled against major M runs
 * with a library whose pocketllm_abi_version() has the same major and a minor
 * at least as large as the one it was compiled with.
 */
#ifndef POCKETLLM_H
#define POCKETLLM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(POCKETLLM_BUILDING_LIBRARY)
#define POCKETLLM_API __attribute__((visibility("default")))
#else
#define POCKETLLM_API
#endif

#define POCKETLLM_ABI_MAJOR 2
#define POCKETLLM_ABI_MINOR 9

/* ------------------------------------------------------------------ */
/* Versions, status codes, errors                                      */
/* ------------------------------------------------------------------ */

typedef enum pocketllm_status {
    POCKETLLM_OK = 0,
    POCKETLLM_ERR_INVALID_ARGUMENT = 1, /* a caller passed something unusable      */
    POCKETLLM_ERR_IO = 2,               /* open/read/write/mmap failed             */
    POCKETLLM_ERR_FORMAT = 3,           /* a file is malformed                     */
    POCKETLLM_ERR_UNSUPPORTED = 4,      /* well-formed but not something we run    */
    POCKETLLM_ERR_NO_MEMORY = 5,        /* an allocation failed                    */
    POCKETLLM_ERR_NOT_FOUND = 6,        /* a key, tensor or device does not exist  */
    POCKETLLM_ERR_CONTEXT_FULL = 7,     /* a sequence does not fit the context     */
    POCKETLLM_ERR_INTERNAL = 8          /* a bug in PocketLLM                      */
} pocketllm_status;

/* (POCKETLLM_ABI_MAJOR << 16) | POCKETLLM_ABI_MINOR of the loaded library. */
POCKETLLM_API uint32_t pocketllm_abi_version(void);
/* Human-readable release string, e.g. "0.1.0". */
POCKETLLM_API const char *pocketllm_version_string(void);
/* Fixed name of a status code, e.g. "format error". */
POCKETLLM_API const char *pocketllm_status_string(pocketllm_status status);
/* One-line message of the last failure on this thread ("" if none). */
POCKETLLM_API const char *pocketllm_last_error(void);

/* ------------------------------------------------------------------ */
/* Tensor element types (ggml type ids, as stored in GGUF files)       */
/* ------------------------------------------------------------------ */

/* Number of type ids the table knows (ids 0 .. count-1). */
POCKETLLM_API uint32_t pocketllm_type_count(void);
/* Name as llama.cpp spells it ("f32", "q4_K", ...), NULL for an unknown id.
 * Ids that llama.cpp removed from GGUF still have a name. */
POCKETLLM_API const char *pocketllm_type_name(uint32_t type);
/* (ABI 2.8) The KV cache type named `name` (llama.cpp's --cache-type-k
 * spelling, any case: f16, bf16, f32, q8_0, q4_0, q4_1, q5_0, q5_1,
 * iq4_nl), or UINT32_MAX for any other name. */
POCKETLLM_API uint32_t pocketllm_kv_type_from_name(const char *name);
/* Elements per block and bytes per block; 0 for removed or unknown ids. */
POCKETLLM_API uint32_t pocketllm_type_block_size(uint32_t type);
POCKETLLM_API uint32_t pocketllm_type_block_bytes(uint32_t type);
/* Type id for a name (case-insensitive), or -1. */
POCKETLLM_API int32_t pocketllm_type_from_name(const char *name);

/* ------------------------------------------------------------------ */
/* GGUF files: reading                                                 */
/* ------------------------------------------------------------------ */

typedef enum pocketllm_gguf_type {
    POCKETLLM_GGUF_UINT8 = 0,
    POCKETLLM_GGUF_INT8 = 1,
    POCKETLLM_GGUF_UINT16 = 2,
    POCKETLLM_GGUF_INT16 = 3,
    POCKETLLM_GGUF_UINT32 = 4,
    POCKETLLM_GGUF_INT32 = 5,
    POCKETLLM_GGUF_FLOAT32 = 6,
    POCKETLLM_GGUF_BOOL = 7,
    POCKETLLM_GGUF_STRING = 8,
    POCKETLLM_GGUF_ARRAY = 9,
    POCKETLLM_GGUF_UINT64 = 10,
    POCKETLLM_GGUF_INT64 = 11,
    POCKETLLM_GGUF_FLOAT64 = 12
} pocketllm_gguf_type;

/* Name of a metadata value type ("uint32", "string", "array", ...). */
POCKETLLM_API const char *pocketllm_gguf_type_name(pocketllm_gguf_type type);

/* A parsed, validated GGUF file, memory-mapped read-only. */
typedef struct pocketllm_gguf pocketllm_gguf;
/* A metadata value inside an open file; valid while the file is open. */
typedef struct pocketllm_gguf_value pocketllm_gguf_value;

/* Open and validate a GGUF file (v2 or v3).  Every count, length, offset and
 * size is checked against the file; a bad file gives POCKETLLM_ERR_FORMAT
 * and a message naming the problem and its byte offset. */
POCKETLLM_API pocketllm_status pocketllm_gguf_open(const char *path, pocketllm_gguf **out);
POCKETLLM_API void pocketllm_gguf_close(pocketllm_gguf *gguf);

POCKETLLM_API uint32_t pocketllm_gguf_version(const pocketllm_gguf *gguf);
POCKETLLM_API uint64_t pocketllm_gguf_file_size(const pocketllm_gguf *gguf);
POCKETLLM_API uint32_t pocketllm_gguf_alignment(const pocketllm_gguf *gguf);
/* Byte offset of the tensor data section in the file. */
POCKETLLM_API uint64_t pocketllm_gguf_data_offset(const pocketllm_gguf *gguf);

POCKETLLM_API uint64_t pocketllm_gguf_kv_count(const pocketllm_gguf *gguf);
/* Key of entry i (NUL-terminated), NULL if i is out of range. */
POCKETLLM_API const char *pocketllm_gguf_kv_key(const pocketllm_gguf *gguf, uint64_t i);
POCKETLLM_API const pocketllm_gguf_value *pocketllm_gguf_kv_value(const pocketllm_gguf *gguf, uint64_t i);
/* The value of a key, or NULL when the key is absent. */
POCKETLLM_API const pocketllm_gguf_value *pocketllm_gguf_find(const pocketllm_gguf *gguf, const char *key);

POCKETLLM_API pocketllm_gguf_type pocketllm_gguf_value_type(const pocketllm_gguf_value *v);
/* Scalar reads.  Integer reads accept any integer or bool value whose number
 * fits the destination; float reads accept any numeric value.  A value of
 * another type, or one out of range, gives POCKETLLM_ERR_INVALID_ARGUMENT. */
POCKETLLM_API pocketllm_status pocketllm_gguf_value_u64(const pocketllm_gguf_value *v, uint64_t *out);
POCKETLLM_API pocketllm_status pocketllm_gguf_value_i64(const pocketllm_gguf_value *v, int64_t *out);
POCKETLLM_API pocketllm_status pocketllm_gguf_value_f64(const pocketllm_gguf_value *v, double *out);
/* String value: NUL-terminated copy (the string may itself contain NUL
 * bytes; *len, when not NULL, receives the true length).  NULL if v is not a
 * string. */
POCKETLLM_API const char *pocketllm_gguf_value_str(const pocketllm_gguf_value *v, uint64_t *len);
/* Arrays: element type and count (0 and POCKETLLM_GGUF_UINT8 for non-arrays). */
POCKETLLM_API pocketllm_gguf_type pocketllm_gguf_array_type(const pocketllm_gguf_value *v);
POCKETLLM_API uint64_t pocketllm_gguf_array_len(const pocketllm_gguf_value *v);
/* Element i of an array of any element type, as a value (NULL when out of
 * range or v is not an array).  For arrays of strings or of arrays the
 * element lives as long as the file; for arrays of numbers it is a view that
 * stays valid until the next pocketllm_gguf_array_get() on the same thread. */
POCKETLLM_API const pocketllm_gguf_value *pocketllm_gguf_array_get(const pocketllm_gguf_value *v, uint64_t i);

typedef struct pocketllm_tensor_info {
    const char *name;     /* NUL-terminated, at most 63 bytes */
    uint32_t type;        /* ggml type id */
    uint32_t n_dims;      /* 1..4 (0 is read as a scalar: ne all 1) */
    int64_t ne[4];        /* elements per dimension, ne[0] innermost; unused = 1 */
    uint64_t offset;      /* byte offset of the data inside the file */
    uint64_t n_bytes;     /* size of the data */
    const void *data;     /* the data, inside the read-only mapping */
} pocketllm_tensor_info;

POCKETLLM_API uint64_t pocketllm_gguf_tensor_count(const pocketllm_gguf *gguf);
POCKETLLM_API pocketllm_status pocketllm_gguf_tensor(const pocketllm_gguf *gguf, uint64_t i,
                                                     pocketllm_tensor_info *out);
/* Index of a tensor by name, or -1. */
POCKETLLM_API int64_t pocketllm_gguf_find_tensor(const pocketllm_gguf *gguf, const char *name);

/* ------------------------------------------------------------------ */
/* GGUF files: writing                                                 */
/* ------------------------------------------------------------------ */

/* Collects metadata and tensors, then writes a GGUF v3 file.  Output is
 * deterministic: the same calls give the same bytes.  The file is written
 * to "<path>.partial" and renamed into place only when complete. */
typedef struct pocketllm_gguf_writer pocketllm_gguf_writer;

POCKETLLM_API pocketllm_status pocketllm_gguf_writer_new(pocketllm_gguf_writer **out);
POCKETLLM_API void pocketllm_gguf_writer_free(pocketllm_gguf_writer *w);

/* Metadata.  Setting a key that is already set replaces its value in place
 * (its position in the file stays the same). */
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_set_u32(pocketllm_gguf_writer *w, const char *key, uint32_t v);
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_set_i32(pocketllm_gguf_writer *w, const char *key, int32_t v);
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_set_u64(pocketllm_gguf_writer *w, const char *key, uint64_t v);
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_set_f32(pocketllm_gguf_writer *w, const char *key, float v);
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_set_bool(pocketllm_gguf_writer *w, const char *key, int v);
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_set_str(pocketllm_gguf_writer *w, const char *key, const char *v);
/* Any scalar type from its raw little-endian bytes (for u8/i8/u16/...). */
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_set_scalar(pocketllm_gguf_writer *w, const char *key,
                                                                pocketllm_gguf_type type, const void *v);
/* Array of fixed-size elements (any type but STRING/ARRAY), copied. */
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_set_array(pocketllm_gguf_writer *w, const char *key,
                                                               pocketllm_gguf_type elem_type,
                                                               const void *data, uint64_t n);
/* Array of NUL-terminated strings, copied. */
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_set_str_array(pocketllm_gguf_writer *w, const char *key,
                                                                   const char *const *strs, uint64_t n);
/* Copy a value of any type (arrays of arrays included) from an open file. */
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_set_value(pocketllm_gguf_writer *w, const char *key,
                                                               const pocketllm_gguf_value *v);
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_remove(pocketllm_gguf_writer *w, const char *key);

/* Tensors, in file order.  `data` (n bytes as the type and shape require)
 * must stay valid until the file is written; pass NULL to stream the data
 * with pocketllm_gguf_writer_write_data() instead. */
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_add_tensor(pocketllm_gguf_writer *w, const char *name,
                                                                uint32_t type, uint32_t n_dims,
                                                                const int64_t *ne, const void *data);

/* One-shot: write everything (all tensors must have data). */
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_write(pocketllm_gguf_writer *w, const char *path);
/* Streaming: begin writes the header; then the data of every tensor in
 * order, in pieces of any size (tensors given with data are written by the
 * writer itself when their turn comes); finish pads, checks that every byte
 * arrived, and renames the file into place.  On any failure the partial
 * file is removed. */
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_begin(pocketllm_gguf_writer *w, const char *path);
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_write_data(pocketllm_gguf_writer *w, const void *data,
                                                                size_t n);
POCKETLLM_API pocketllm_status pocketllm_gguf_writer_finish(pocketllm_gguf_writer *w);

/* ------------------------------------------------------------------ */
/* Models and their tokenizers                                         */
/* ------------------------------------------------------------------ */

/* A checkpoint opened on one device: its tokenizer and (unless
 * vocab_only, or the file holds only a vocabulary) its weights. */
typedef struct pocketllm_model pocketllm_model;

typedef struct pocketllm_model_params {
    const char *device;   /* NULL or "cpu": the CPU; "vulkan": the first usable Vulkan
                           * device (discrete GPUs first); "vulkan:N": device N of
                           * pocketllm_vulkan_probe.  On a device the weights are uploaded
                           * once, here, in their stored blocks, and every session's KV
                           * cache and activations live there too: a model that does not
                           * fit is refused (never split, never offloaded to the host) */
    int vocab_only;       /* load only the tokenizer */
    int n_threads;        /* worker threads; 0 = the physical core count */
    uint64_t device_memory; /* the most bytes of the device the model may use; 0 = all the
                             * device reports (to play a smaller device) */
    /* progress of a long load (the upload of weights to a device): `done` of
     * `total` bytes for `what` ("vulkan:0 (...)"); may be NULL */
    void (*progress)(void *user, const char *what, uint64_t done, uint64_t total);
    void *progress_user;
} pocketllm_model_params;

POCKETLLM_API pocketllm_model_params pocketllm_model_default_params(void);
/* Open a GGUF checkpoint (or a vocabulary-only GGUF). */
POCKETLLM_API pocketllm_status pocketllm_model_open(const char *path, const pocketllm_model_params *params,
                                                    pocketllm_model **out);
POCKETLLM_API void pocketllm_model_close(pocketllm_model *model);
/* The device the model runs on ("cpu", or e.g. "vulkan:0 (NVIDIA H200)"),
 * and on a device the bytes allocated there now and the most it may use
 * (both 0 on the CPU); any pointer may be NULL. */
POCKETLLM_API const char *pocketllm_model_device(const pocketllm_model *model, uint64_t *used, uint64_t *budget);
/* general.architecture, or "" for a vocabulary-only file. */
POCKETLLM_API const char *pocketllm_model_arch(const pocketllm_model *model);
/* Tokens in the vocabulary (0 when the file has no tokenizer). */
POCKETLLM_API int32_t pocketllm_model_n_vocab(const pocketllm_model *model);

/* Tokenize len bytes of text as llama.cpp's llama_tokenize does:
 * add_special adds BOS/EOS as the vocabulary asks (tokenizer.ggml.add_bos_token,
 * add_eos_token); parse_special recognises special and control tokens
 * written in the text.  Writes at most cap ids; *n_ids receives the count
 * needed, and when it exceeds cap the call fails with
 * POCKETLLM_ERR_INVALID_ARGUMENT so the caller can retry with more room. */
POCKETLLM_API pocketllm_status pocketllm_tokenize(const pocketllm_model *model, const char *text, size_t len,
                                                  int add_special, int parse_special, int32_t *ids, size_t cap,
                                                  size_t *n_ids);
/* The text of one token (special: render special/control tokens rather
 * than nothing), as llama_token_to_piece.  Same buffer rule as above. */
POCKETLLM_API pocketllm_status pocketllm_token_to_piece(const pocketllm_model *model, int32_t id, int special,
                                                        char *buf, size_t cap, size_t *len);
/* The text of a sequence of ids, as llama_detokenize. */
POCKETLLM_API pocketllm_status pocketllm_detokenize(const pocketllm_model *model, const int32_t *ids, size_t n,
                                                    int remove_special, int unparse_special, char *buf,
                                                    size_t cap, size_t *len);
POCKETLLM_API int32_t pocketllm_token_bos(const pocketllm_model *model); /* -1 if none */
POCKETLLM_API int32_t pocketllm_token_eos(const pocketllm_model *model); /* -1 if none */
/* Whether generation should stop at this id (EOS, EOT, <|im_end|>, ...). */
POCKETLLM_API int pocketllm_token_is_eog(const pocketllm_model *model, int32_t id);

/* Streaming detokenization: push ids one at a time and receive text that
 * never ends inside a UTF-8 character; bytes held back across token
 * boundaries come out with the next push or with flush.  All the pushes'
 * output followed by the flush's is exactly pocketllm_detokenize(ids,
 * remove_special = 0, unparse_special).  Buffer rule as for
 * pocketllm_tokenize: when the text does not fit, the call fails with
 * POCKETLLM_ERR_INVALID_ARGUMENT, *len says how many bytes it needs, and
 * nothing is consumed (push the same id again with more room).  A bad id
 * fails and changes nothing. */
typedef struct pocketllm_detokenizer pocketllm_detokenizer;
POCKETLLM_API pocketllm_status pocketllm_detokenizer_new(const pocketllm_model *model, int unparse_special,
                                                         pocketllm_detokenizer **out);
POCKETLLM_API pocketllm_status pocketllm_detokenizer_push(pocketllm_detokenizer *d, int32_t id, char *buf,
                                                          size_t cap, size_t *len);
POCKETLLM_API pocketllm_status pocketllm_detokenizer_flush(pocketllm_detokenizer *d, char *buf, size_t cap,
                                                           size_t *len);
POCKETLLM_API void pocketllm_detokenizer_free(pocketllm_detokenizer *d);

/* ------------------------------------------------------------------ */
/* Running a model: sessions, logits, sampling                         */
/* ------------------------------------------------------------------ */

/* The context length the model was trained for (GGUF <arch>.context_length),
 * 0 for a vocabulary-only model. */
POCKETLLM_API uint32_t pocketllm_model_n_ctx_train(const pocketllm_model *model);

/* One sequence evaluated on an open model: its KV cache, the positions
 * filled so far, and the logits of the last evaluation.  A session belongs
 * to one thread at a time; several sessions may share one model. */
typedef struct pocketllm_session pocketllm_session;

typedef struct pocketllm_session_params {
    uint32_t n_ctx;   /* positions the KV cache holds; 0 = the model's training
                       * context, at most 4096 */
    uint32_t n_batch; /* most tokens per forward pass (longer inputs are split
                       * into passes); 0 = 512 */
    uint32_t kv_type; /* element type (ggml id) of the K cache, and of the V
                       * cache unless kv_type_v says otherwise: 1 = f16 (the
                       * default, as llama.cpp), 0 = f32, 30 = bf16, or
                       * (ABI 2.8) a block type kept packed -- 8 = q8_0, 2 =
                       * q4_0, 3 = q4_1, 6 = q5_0, 7 = q5_1, 20 = iq4_nl --
                       * whose 32-value blocks must divide the model's
                       * heads.  Packed types and mixed K/V run on the CPU. */
    int n_threads;    /* 0 = the model's n_threads (itself 0 = the physical cores) */
    int flash_attn;   /* 1: attention by llama.cpp's flash-attention arithmetic
                       * (its -fa on: online softmax, V summed in the cache
                       * type), to match llama.cpp run that way; 0 (the
                       * default): its default path, which this engine's
                       * tests compare against and which is faster here */
    uint32_t kv_type_v; /* (ABI 2.8) the V cache's type when it differs from
                         * kv_type; POCKETLLM_KV_AS_K (the default) = kv_type.
                         * A quantized V needs flash_attn = 1 (as in
                         * llama.cpp). */
} pocketllm_session_params;

#define POCKETLLM_KV_AS_K 0xFFFFFFFFu

POCKETLLM_API pocketllm_session_params pocketllm_session_default_params(void);
/* A new session at position 0.  The KV cache is allocated here, and on
 * the CPU its pages are committed here too (no page faults mid-decode). */
POCKETLLM_API pocketllm_status pocketllm_session_new(pocketllm_model *model, const pocketllm_session_params *params,
                                                     pocketllm_session **out);
POCKETLLM_API void pocketllm_session_free(pocketllm_session *s);

/* Evaluate n ids at the next n positions: a batched prefill, or one step of
 * decoding with n = 1.  With all_logits the logits of every one of the n
 * positions are kept, else only those of the last.  When the call fails
 * the session keeps the positions it had (the last logits are dropped):
 * POCKETLLM_ERR_CONTEXT_FULL when the ids do not fit the positions left,
 * POCKETLLM_ERR_INVALID_ARGUMENT for n = 0 or an id outside the vocabulary. */
POCKETLLM_API pocketllm_status pocketllm_session_eval(pocketllm_session *s, const int32_t *ids, size_t n,
                                                      int all_logits);
/* The n_vocab logits of position i of the last eval (0 <= i < n with
 * all_logits; -1 = its last position), or NULL when not kept.  Valid until
 * the next eval or reset of the session. */
POCKETLLM_API const float *pocketllm_session_logits(const pocketllm_session *s, int32_t i);
/* Positions filled, and the most the session holds. */
POCKETLLM_API uint32_t pocketllm_session_n_past(const pocketllm_session *s);
POCKETLLM_API uint32_t pocketllm_session_n_ctx(const pocketllm_session *s);
/* Logits per position: the rows of the model's output matrix (the
 * vocabulary size, also for a file without a tokenizer). */
POCKETLLM_API int32_t pocketllm_session_n_vocab(const pocketllm_session *s);
/* Forget every position: the next eval starts at position 0 again. */
POCKETLLM_API void pocketllm_session_reset(pocketllm_session *s);

/* (ABI 2.4) The router of a mixture-of-experts model (qwen3moe, qwen2moe),
 * seen from outside: fn is called during every later eval of s, once per
 * layer of each pass once the layer's router has chosen, with the layer
 * (0-based), the pass's n_tok tokens in the order the pass evaluates them
 * (for pocketllm_session_eval, its ids in order, a pass of at most n_batch
 * at a time; the last layer may see only the pass's last tokens, those whose
 * logits are kept), and per token the n_used experts chosen
 * (ids[t * n_used + j], the router's order) with their weights.  The arrays
 * are valid during the call only.  On a GPU each call waits for the device
 * (a diagnostic, not for speed).  NULL turns it off; a dense model never
 * calls it. */
typedef void (*pocketllm_route_fn)(void *user, int32_t layer, int32_t n_tok, int32_t n_used, const int32_t *ids,
                                   const float *weights);
POCKETLLM_API void pocketllm_session_set_route_observer(pocketllm_session *s, pocketllm_route_fn fn, void *user);

/* Choosing the next token from logits.  The steps run in llama.cpp's order:
 * penalties, top-k, top-p, min-p, temperature, then a draw from the
 * distribution with the sampler's own generator, so the same seed and the
 * same logits give the same ids on every machine.  Temperature <= 0 is
 * greedy: the largest logit after the penalties (the lowest id on ties). */
typedef struct pocketllm_sampler pocketllm_sampler;

typedef struct pocketllm_sampler_params {
    float temperature;       /* default 0 (greedy) */
    int32_t top_k;           /* keep the k largest; <= 0 = off; default 40 */
    float top_p;             /* keep the smallest most-likely set with probability >= top_p; 1 = off; default 0.95 */
    float min_p;             /* drop tokens less likely than min_p x the most likely; 0 = off; default 0.05 */
    float repeat_penalty;    /* recent tokens: positive logits divided by it, negative multiplied; 1 = off */
    float presence_penalty;  /* subtracted once from the logit of every recent token; 0 = off */
    float frequency_penalty; /* subtracted per occurrence among the recent tokens; 0 = off */
    int32_t penalty_last_n;  /* how many recent tokens the penalties look at; -1 = all; default 64 */
    uint64_t seed;
} pocketllm_sampler_params;

POCKETLLM_API pocketllm_sampler_params pocketllm_sampler_default_params(void);
/* Fails with POCKETLLM_ERR_INVALID_ARGUMENT for a parameter out of range: a
 * repeat penalty that is not a positive number, a non-finite temperature or
 * penalty, top_p or min_p outside [0, 1], penalty_last_n below -1. */
POCKETLLM_API pocketllm_status pocketllm_sampler_new(const pocketllm_sampler_params *params, pocketllm_sampler **out);
POCKETLLM_API void pocketllm_sampler_free(pocketllm_sampler *s);
/* The next id from n_vocab logits (left unchanged).  Does not record it:
 * call pocketllm_sampler_accept for every id that enters the sequence
 * (prompt ids too, as llama.cpp does), so the penalties see it. */
POCKETLLM_API pocketllm_status pocketllm_sampler_sample(pocketllm_sampler *s, const float *logits, int32_t n_vocab,
                                                        int32_t *id);
POCKETLLM_API void pocketllm_sampler_accept(pocketllm_sampler *s, int32_t id);
/* (ABI 2.8) The distribution pocketllm_sampler_sample draws from for these
 * logits, as n_vocab probabilities (0 for every id the chain removes; one
 * 1 where greedy picks).  Uses no randomness. */
POCKETLLM_API pocketllm_status pocketllm_sampler_probs(pocketllm_sampler *s, const float *logits, int32_t n_vocab,
                                                       float *probs);
/* (ABI 2.8) One step of speculative sampling's acceptance rule: the draft
 * id was drawn from q (NULL: proposed for certain, as prompt lookup does);
 * p is the target's distribution (pocketllm_sampler_probs).  *id = draft
 * with probability min(1, p[draft] / q[draft]); otherwise an id drawn from
 * max(0, p - q) renormalised, which is never the draft.  So the id that
 * results is distributed as p, whatever q is. */
POCKETLLM_API pocketllm_status pocketllm_sampler_spec_step(pocketllm_sampler *s, const float *p, const float *q,
                                                           int32_t n_vocab, int32_t draft, int32_t *id);
/* Forget the recorded ids and restart the generator from the seed. */
POCKETLLM_API void pocketllm_sampler_reset(pocketllm_sampler *s);

/* ------------------------------------------------------------------ */
/* Constrained decoding: grammars and JSON schemas  (ABI 2.5)          */
/* ------------------------------------------------------------------ */

/* A grammar the generated text must match, over the model's vocabulary:
 * at each step only tokens whose text keeps the text a prefix of some
 * match are allowed, and an end-of-generation token only once the text is
 * a whole match.  Special tokens (those that write no text) are never
 * allowed while a grammar is active.  One grammar follows one sequence:
 * clone it for another. */
typedef struct pocketllm_grammar pocketllm_grammar;

/* From GBNF text in llama.cpp's dialect (its grammars/README.md), start
 * rule `root` ("root" when NULL).  A syntax error, an undefined rule,
 * left recursion or a grammar that matches nothing fails with
 * POCKETLLM_ERR_INVALID_ARGUMENT and a message naming the line. */
POCKETLLM_API pocketllm_status pocketllm_grammar_new(const pocketllm_model *model, const char *gbnf, const char *root,
                                                     pocketllm_grammar **out);
/* From a JSON schema (len bytes of JSON text), compiled to a grammar; a
 * schema keyword the compiler cannot honour fails with
 * POCKETLLM_ERR_UNSUPPORTED and a message naming it and where it is --
 * never skipped.  schema NULL: any JSON object (OpenAI's json_object). */
POCKETLLM_API pocketllm_status pocketllm_grammar_from_json_schema(const pocketllm_model *model, const char *schema,
                                                                  size_t len, pocketllm_grammar **out);
/* Lazy activation: text is free until one of the n words appears in it;
 * from that word's first byte on the text must match the grammar.  n = 0
 * makes the grammar active from the start again. */
POCKETLLM_API pocketllm_status pocketllm_grammar_set_triggers(pocketllm_grammar *g, const char *const *words, size_t n);
/* Text between open and close (a think block: "<think>", "</think>")
 * triggers nothing: a model that mentions a call while it reasons has not
 * made one.  start_inside: the text starts inside such a zone (a prompt
 * that opened the think block). */
POCKETLLM_API pocketllm_status pocketllm_grammar_set_trigger_zone(pocketllm_grammar *g, const char *open,
                                                                  const char *close, int start_inside);
/* An independent copy in the same place (the parsed grammar is shared). */
POCKETLLM_API pocketllm_status pocketllm_grammar_clone(const pocketllm_grammar *g, pocketllm_grammar **out);
POCKETLLM_API void pocketllm_grammar_free(pocketllm_grammar *g);
/* Back to the start, as before any token. */
POCKETLLM_API void pocketllm_grammar_reset(pocketllm_grammar *g);
/* Whether token id may come next (nonzero) -- or, for an inactive lazy
 * grammar, does not trigger it into text it refuses. */
POCKETLLM_API int pocketllm_grammar_allows(pocketllm_grammar *g, int32_t id);
/* Advance past a generated token; a token the grammar refuses fails with
 * POCKETLLM_ERR_INVALID_ARGUMENT and changes nothing.  (Prompt tokens are
 * not the grammar's business: do not pass them.) */
POCKETLLM_API pocketllm_status pocketllm_grammar_accept(pocketllm_grammar *g, int32_t id);
/* The text so far is a whole match (an inactive lazy grammar: always). */
POCKETLLM_API int pocketllm_grammar_complete(const pocketllm_grammar *g);
/* The text is a whole match and nothing more can follow: only an
 * end-of-generation token is allowed now. */
POCKETLLM_API int pocketllm_grammar_done(const pocketllm_grammar *g);
/* allow[t] = 1 for every token the grammar allows next, else 0; n_vocab
 * must be the model's vocabulary size. */
POCKETLLM_API pocketllm_status pocketllm_grammar_mask(pocketllm_grammar *g, uint8_t *allow, int32_t n_vocab);
/* pocketllm_sampler_sample under a grammar (g NULL: unconstrained).  The
 * unconstrained choice is drawn first and kept when the grammar allows it;
 * only otherwise is the vocabulary masked and the draw made again, as
 * llama.cpp's sampler does -- greedy decoding gives the most likely
 * allowed token either way.  budget >= 0: the tokens that may still be
 * generated, this one included; a token is then allowed only if the
 * grammar can still be completed in the tokens after it, so the reply
 * ends as a whole match instead of being cut off (when even that cannot
 * be met, the budget is dropped).  -1: no budget.  Does not accept the
 * token: call pocketllm_grammar_accept (and pocketllm_sampler_accept). */
POCKETLLM_API pocketllm_status pocketllm_sampler_sample_grammar(pocketllm_sampler *s, pocketllm_grammar *g,
                                                                const float *logits, int32_t n_vocab, int32_t budget,
                                                                int32_t *id);

/* ------------------------------------------------------------------ */
/* Several sequences in one session: continuous batching               */
/* ------------------------------------------------------------------ */

/* A session that holds n_seq sequences (0 .. n_seq-1) in one KV cache,
 * each up to params->n_ctx positions (the cache holds n_seq x n_ctx), and
 * evaluates tokens of any of them in one forward pass -- a server decodes
 * all its requests together this way.  Every token's result is bit for bit
 * the one it would have with its sequence alone in a session of its own:
 * batching never changes an answer.  pocketllm_session_new(...) is
 * pocketllm_session_new_multi(..., 1, ...); on a multi-sequence session
 * the single-sequence calls (eval, logits, n_past, reset) act on sequence
 * 0 (reset: on all). */
POCKETLLM_API pocketllm_status pocketllm_session_new_multi(pocketllm_model *model, const pocketllm_session_params *params,
                                                           uint32_t n_seq, pocketllm_session **out);
POCKETLLM_API uint32_t pocketllm_session_n_seq(const pocketllm_session *s);

/* One token of a batch: its id, its sequence, and whether to keep its
 * logits. */
typedef struct pocketllm_batch_token {
    int32_t id;
    uint32_t seq;
    int logits;
} pocketllm_batch_token;

/* Evaluate n tokens, each at the next position of its sequence (the tokens
 * of one sequence in batch order), in passes of at most n_batch tokens.
 * On failure no sequence advances: POCKETLLM_ERR_CONTEXT_FULL when a
 * sequence's tokens do not fit its positions left,
 * POCKETLLM_ERR_INVALID_ARGUMENT for n = 0, a sequence outside 0..n_seq-1
 * or an id outside the vocabulary. */
POCKETLLM_API pocketllm_status pocketllm_session_eval_batch(pocketllm_session *s, const pocketllm_batch_token *toks,
                                                            size_t n);
/* The n_vocab logits of token i of the last eval_batch, NULL when it did
 * not ask for them.  Valid until the next evaluation, truncate or reset. */
POCKETLLM_API const float *pocketllm_session_batch_logits(const pocketllm_session *s, size_t i);
/* Positions one sequence has filled. */
POCKETLLM_API uint32_t pocketllm_session_seq_n_past(const pocketllm_session *s, uint32_t seq);
/* Forget a sequence's positions from n_past on (0: all of it), so that it
 * continues from there -- a new request in a freed sequence, or a chat
 * whose next prompt shares only a prefix with what the sequence holds.
 * A larger n_past than the sequence holds changes nothing. */
POCKETLLM_API pocketllm_status pocketllm_session_seq_truncate(pocketllm_session *s, uint32_t seq, uint32_t n_past);

/* (ABI 2.7) Prompt-lookup drafting for speculative decoding (no draft
 * model): up to max ids that followed the latest earlier occurrence of the
 * last k ids of hist[0..n), k from ngram_max down to ngram_min (the first
 * k that matches wins), written to out; returns how many (0: no match, or
 * bad arguments).  The caller verifies them with the target in one
 * all_logits pass and cuts the cache back with pocketllm_session_seq_truncate
 * to what it keeps: the rows of a batched pass equal single-step decoding's,
 * so greedy verification reproduces plain greedy output. */
POCKETLLM_API size_t pocketllm_lookup_draft(const int32_t *hist, size_t n, int ngram_min, int ngram_max, int32_t *out,
                                            size_t max);

/* ------------------------------------------------------------------ */
/* Embeddings  (ABI 2.5)                                               */
/* ------------------------------------------------------------------ */

/* How a sequence's hidden states become one vector: llama.cpp's
 * llama_pooling_type numbering, as GGUF <arch>.pooling_type stores it. */
typedef enum pocketllm_pooling {
    POCKETLLM_POOLING_MODEL = -1, /* the checkpoint's own (pocketllm_model_pooling) */
    POCKETLLM_POOLING_NONE = 0,   /* none: one vector per token */
    POCKETLLM_POOLING_MEAN = 1,   /* the mean over the tokens */
    POCKETLLM_POOLING_CLS = 2,    /* the first token's */
    POCKETLLM_POOLING_LAST = 3,   /* the last token's (Qwen3-Embedding) */
    POCKETLLM_POOLING_RANK = 4    /* a reranker's classification head: not supported */
} pocketllm_pooling;

/* The width of the hidden state, which is an embedding's length (0 for a
 * vocabulary-only model).  (ABI 2.5) */
POCKETLLM_API int32_t pocketllm_model_n_embd(const pocketllm_model *model);
/* The pooling the checkpoint declares: <arch>.pooling_type as stored
 * (RANK, and values past it, come back as they are; pocketllm_embed
 * refuses them), POCKETLLM_POOLING_NONE when the key is absent -- as
 * llama.cpp reads it -- and -2 when the key is not an integer.  (ABI 2.5) */
POCKETLLM_API int32_t pocketllm_model_pooling(const pocketllm_model *model);

/* The embedding of n ids, as llama.cpp computes it with embeddings on: the
 * hidden states after the model's final norm (before the output
 * projection), pooled.  The ids are evaluated as a sequence of their own
 * from position 0 on sequence seq of s (0 for a one-sequence session):
 * what the sequence held is dropped, and it is left empty.  They go in
 * passes of at most the session's n_batch and the pooling accumulates
 * across them, so an input longer than the batch needs only to fit the
 * context: n over the session's n_ctx fails with POCKETLLM_ERR_CONTEXT_FULL.
 * The ids are used as given: tokenize with add_special to get the BOS/EOS
 * the vocabulary asks for (Qwen3-Embedding's tokenizer.ggml.add_eos_token
 * appends the end-of-text token its last-token pooling reads).
 * pooling: a pocketllm_pooling (POCKETLLM_POOLING_MODEL: the checkpoint's).
 * normalize: nonzero divides each vector by its Euclidean norm (llama.cpp's
 * default), 0 leaves it as it is.  out receives n_embd floats, or with
 * POCKETLLM_POOLING_NONE n x n_embd (a vector per token, each normalised on
 * its own); out_len, in floats, must hold that.  (ABI 2.5) */
POCKETLLM_API pocketllm_status pocketllm_embed(pocketllm_session *s, uint32_t seq, const int32_t *ids, size_t n,
                                               int32_t pooling, int normalize, float *out, size_t out_len);

/* ------------------------------------------------------------------ */
/* Images in: a vision tower (mmproj) beside a text model  (ABI 2.2)   */
/* ------------------------------------------------------------------ */

/* A Qwen3-VL vision tower -- an mmproj GGUF as llama.cpp's converter
 * writes it (clip.projector_type qwen3vl_merger) -- opened for one text
 * model (a qwen3vl checkpoint), on that model's device.  A prompt names
 * where each image goes with the media marker; pocketllm_session_eval_media
 * composes and evaluates it as llama.cpp's libmtmd does: the text pieces
 * between markers tokenized one by one, each image as <|vision_start|>,
 * its merged tokens in raster order at Qwen3-VL's multi-axis positions,
 * <|vision_end|>. */
typedef struct pocketllm_mmproj pocketllm_mmproj;

typedef struct pocketllm_mmproj_params {
    uint32_t image_min_tokens; /* an image's token budget (llama.cpp's --image-min-tokens /
                                * --image-max-tokens); 0 = the defaults, 8 and 4096 */
    uint32_t image_max_tokens;
} pocketllm_mmproj_params;

POCKETLLM_API pocketllm_mmproj_params pocketllm_mmproj_default_params(void);
/* Open the tower at `path` for `model` (which must stay open while the
 * tower is).  Fails with a message for a file that is not a Qwen3-VL
 * tower, one whose output width or DeepStack count does not match the text
 * model, or token limits the preprocessing cannot use.  (ABI 2.3) The file
 * may hold a vision tower, an audio tower (Qwen3-ASR's qwen3a: audio in
 * the prompt, pocketllm_transcribe) or both, as its clip.has_vision_encoder
 * / clip.has_audio_encoder say; each is opened and checked. */
POCKETLLM_API pocketllm_status pocketllm_mmproj_open(pocketllm_model *model, const char *path,
                                                     const pocketllm_mmproj_params *params, pocketllm_mmproj **out);
POCKETLLM_API void pocketllm_mmproj_close(pocketllm_mmproj *mm);

/* What the tower's file says, and the token limits it was opened with. */
typedef struct pocketllm_mmproj_info {
    char projector[32];         /* clip.projector_type, e.g. "qwen3vl_merger" */
    uint32_t n_embd;            /* the tower's width */
    uint32_t n_layer, n_head, n_ff;
    uint32_t patch_size;        /* pixels per patch side */
    uint32_t n_merge;           /* patches merged per token side (2: 2x2 patches a token) */
    uint32_t image_size;        /* the side the learned position table was made for */
    uint32_t n_embd_text;       /* width of an output token: the text model's n_embd */
    uint32_t n_deepstack;       /* DeepStack feature sets per token */
    uint32_t image_min_tokens, image_max_tokens;
    /* (ABI 2.3) which towers the file holds; the vision fields above are 0
     * without a vision tower (projector then names the audio projector) */
    uint32_t has_vision, has_audio;
    char audio_projector[32];   /* clip.audio.projector_type, e.g. "qwen3a"; "" without audio */
    uint32_t audio_n_embd;      /* the audio encoder's width */
    uint32_t audio_n_layer, audio_n_head, audio_n_ff;
    uint32_t audio_n_mel;       /* mel bins of the front end (128) */
    uint32_t audio_n_embd_text; /* width of an audio output token: the text model's n_embd */
} pocketllm_mmproj_info;

POCKETLLM_API pocketllm_status pocketllm_mmproj_get_info(const pocketllm_mmproj *mm, pocketllm_mmproj_info *out);

/* A decoded image: 8-bit RGB.  JPEG, PNG and WebP are read (told apart by
 * their bytes; grayscale and CMYK become RGB, transparency is composited
 * onto white, EXIF orientation is applied); corrupt, truncated, empty or
 * oversized data fails with a one-line message. */
typedef struct pocketllm_image pocketllm_image;

POCKETLLM_API pocketllm_status pocketllm_image_load(const char *path, pocketllm_image **out);
POCKETLLM_API pocketllm_status pocketllm_image_decode(const void *data, size_t len, pocketllm_image **out);
/* An image from width x height pixels of R, G, B bytes, row by row from the
 * top, no padding (copied). */
POCKETLLM_API pocketllm_status pocketllm_image_from_rgb(const uint8_t *rgb, uint32_t width, uint32_t height,
                                                        pocketllm_image **out);
POCKETLLM_API void pocketllm_image_free(pocketllm_image *img);
POCKETLLM_API uint32_t pocketllm_image_width(const pocketllm_image *img);
POCKETLLM_API uint32_t pocketllm_image_height(const pocketllm_image *img);

/* The text that marks where an image goes in a prompt: "<__media__>", as
 * llama.cpp's mtmd_default_marker(). */
POCKETLLM_API const char *pocketllm_media_marker(void);

/* The tokens an image takes with this tower and its limits -- *nx columns
 * by *ny rows of merged tokens, *n_tokens = nx x ny cache positions (the
 * delimiters not counted) -- without running the tower.  Any pointer but
 * mm and img may be NULL. */
POCKETLLM_API pocketllm_status pocketllm_mmproj_image_tokens(const pocketllm_mmproj *mm, const pocketllm_image *img,
                                                             uint32_t *n_tokens, uint32_t *nx, uint32_t *ny);

/* The cache positions a prompt with images takes (text, delimiters and
 * image tokens: what pocketllm_session_eval_media adds to n_past), without
 * running the tower; the same checks as eval_media.  mm may be NULL for a
 * prompt without images.  *n_tokens receives the count; with ids not NULL,
 * the prompt's ids go there too, each image token as -1 (the same buffer
 * rule as pocketllm_tokenize: when the count exceeds cap the call fails
 * with POCKETLLM_ERR_INVALID_ARGUMENT and *n_tokens says how many). */
POCKETLLM_API pocketllm_status pocketllm_media_prompt_tokens(const pocketllm_model *model, const pocketllm_mmproj *mm,
                                                             const char *text, size_t len,
                                                             const pocketllm_image *const *images, size_t n_images,
                                                             int add_special, int parse_special, int32_t *ids,
                                                             size_t cap, uint32_t *n_tokens);

/* Evaluate len bytes of text holding one media marker per image, images[i]
 * going where the i-th marker is, after what the session holds (sequence
 * 0), and leave the logits of the last token (pocketllm_session_logits(s,
 * -1)) to sample from.  add_special and parse_special are as for
 * pocketllm_tokenize (BOS first when the vocabulary asks for it; special
 * tokens written in the text recognised).  Each image runs through the
 * tower here.  Refused before anything is evaluated: a marker count that
 * differs from n_images or images without a tower
 * (POCKETLLM_ERR_INVALID_ARGUMENT), a tower opened for another model, a
 * prompt longer than the context left (POCKETLLM_ERR_CONTEXT_FULL).  When
 * a later step fails, the session is back where it was.  mm may be NULL
 * for a prompt without images. */
POCKETLLM_API pocketllm_status pocketllm_session_eval_media(pocketllm_session *s, pocketllm_mmproj *mm, const char *text,
                                                            size_t len, const pocketllm_image *const *images,
                                                            size_t n_images, int add_special, int parse_special);
/* pocketllm_session_eval_media on sequence seq of a multi-sequence session
 * (pocketllm_session_new_multi), after what that sequence holds; the last
 * token's logits are pocketllm_session_logits(s, -1).  The server runs a
 * prompt with images this way, on its own sequence.  (ABI 2.2) */
POCKETLLM_API pocketllm_status pocketllm_session_eval_media_seq(pocketllm_session *s, uint32_t seq, pocketllm_mmproj *mm,
                                                                const char *text, size_t len,
                                                                const pocketllm_image *const *images, size_t n_images,
                                                                int add_special, int parse_special);

/* ------------------------------------------------------------------ */
/* Audio in  (ABI 2.3)                                                 */
/* ------------------------------------------------------------------ */

/* A decoded recording: mono float samples at 16 kHz (Qwen3-ASR's rate).
 * WAV, FLAC, MP3, Ogg/Vorbis, Opus and the other formats libsndfile reads
 * are told apart by their bytes; the channels are mixed (their mean) and
 * the rate converted (libsoxr, high quality); 16 kHz mono comes through
 * unchanged.  Data that is not audio, corrupt or truncated (a WAV data
 * chunk shorter than its header says), without frames, with a rate of 0
 * or over 768 kHz, 0 or over 64 channels, a sample that is NaN, Inf or
 * beyond +-65536, or longer than 3 hours fails
 * with a one-line message.  A build without the decoders
 * (PL_AUDIO_DECODE=OFF: the static ARM64 CLI) fails load/decode saying so,
 * and from_pcm then takes 16 kHz input only. */
typedef struct pocketllm_audio pocketllm_audio;

POCKETLLM_API pocketllm_status pocketllm_audio_load(const char *path, pocketllm_audio **out);
POCKETLLM_API pocketllm_status pocketllm_audio_decode(const void *data, size_t len, pocketllm_audio **out);
/* A recording from `frames` frames of `channels` interleaved float samples
 * at sample_rate Hz (mixed and resampled as above; copied). */
POCKETLLM_API pocketllm_status pocketllm_audio_from_pcm(const float *pcm, size_t frames, uint32_t channels,
                                                        uint32_t sample_rate, pocketllm_audio **out);
POCKETLLM_API void pocketllm_audio_free(pocketllm_audio *a);
/* Its length in 16 kHz samples, and in seconds. */
POCKETLLM_API size_t pocketllm_audio_n_samples(const pocketllm_audio *a);
POCKETLLM_API double pocketllm_audio_seconds(const pocketllm_audio *a);

/* ------------------------------------------------------------------ */
/* Media lists and transcription: audio in the prompt  (ABI 2.3)       */
/* ------------------------------------------------------------------ */

/* One media item of a prompt: exactly one of image and audio set.  A
 * prompt's i-th media marker takes media[i].  An audio clip goes in as
 * libmtmd composes it for Qwen3-ASR (projector qwen3a): "<|audio_start|>",
 * the tokens of each mel window of the clip (30 s windows), "<|audio_end|>";
 * audio tokens take 1-D positions (all four M-RoPE axes p0 + i). */
typedef struct pocketllm_media {
    const pocketllm_image *image;
    const pocketllm_audio *audio;
} pocketllm_media;

/* pocketllm_session_eval_media_seq for a list of images and audio clips:
 * the same composition, checks and failure rule (the sequence is back where
 * it was when a step fails).  The tower each item needs must be in mm. */
POCKETLLM_API pocketllm_status pocketllm_session_eval_media_list(pocketllm_session *s, uint32_t seq,
                                                                 pocketllm_mmproj *mm, const char *text, size_t len,
                                                                 const pocketllm_media *media, size_t n_media,
                                                                 int add_special, int parse_special);
/* pocketllm_media_prompt_tokens for a list of images and audio clips (each
 * media token as -1 in ids), without running a tower. */
POCKETLLM_API pocketllm_status pocketllm_media_list_tokens(const pocketllm_model *model, const pocketllm_mmproj *mm,
                                                           const char *text, size_t len, const pocketllm_media *media,
                                                           size_t n_media, int add_special, int parse_special,
                                                           int32_t *ids, size_t cap, uint32_t *n_tokens);
/* The tokens an audio clip takes with this mmproj's audio tower (the
 * delimiters not counted), without running the tower. */
POCKETLLM_API pocketllm_status pocketllm_mmproj_audio_tokens(const pocketllm_mmproj *mm, const pocketllm_audio *a,
                                                             uint32_t *n_tokens);

/* Speech to text with a Qwen3-ASR pair (text model + qwen3a mmproj). */
typedef struct pocketllm_transcribe_params {
    const char *language;      /* NULL: the model says which */
    const char *context;       /* text that biases the transcript (OpenAI's `prompt`), or NULL */
    float temperature;         /* 0: greedy */
    uint64_t seed;
    double max_piece_seconds;  /* pieces of a long recording, 0: 30 */
    void (*progress)(void *user, double done_seconds, double total_seconds);
    void *user;
} pocketllm_transcribe_params;

typedef struct pocketllm_transcript_segment {
    double start, end;         /* seconds into the recording */
    char *text;
} pocketllm_transcript_segment;

typedef struct pocketllm_transcript {
    char *text;                /* the pieces' transcripts joined, no prefix, no special tokens */
    char language[32];         /* as the model wrote it ("English"), or the forced one */
    size_t n_segments;         /* one per piece */
    pocketllm_transcript_segment *segments;
    uint32_t n_cut;            /* pieces whose generation hit the token bound (a repetition loop) */
    uint32_t n_tokens;         /* tokens generated */
} pocketllm_transcript;

POCKETLLM_API pocketllm_transcribe_params pocketllm_transcribe_default_params(void);
/* One call from a recording to a transcript, on sequence seq of s (emptied
 * first and after).  A recording longer than max_piece_seconds is cut at
 * quiet points into pieces, each transcribed on its own; over 20 minutes
 * (Qwen3-ASR's limit) is refused.  *out is freed with
 * pocketllm_transcript_free. */
POCKETLLM_API pocketllm_status pocketllm_transcribe(pocketllm_session *s, uint32_t seq, pocketllm_mmproj *mm,
                                                    const pocketllm_audio *audio, const pocketllm_transcribe_params *p,
                                                    pocketllm_transcript **out);
POCKETLLM_API void pocketllm_transcript_free(pocketllm_transcript *t);

/* ------------------------------------------------------------------ */
/* Synthetic checkpoints: random weights at a real model shape         */
/* ------------------------------------------------------------------ */

/* Size and benchmark a model shape before downloading it, and give tests a
 * checkpoint at a real shape.  The output is deterministic: the same
 * parameters give the same bytes. */
typedef struct pocketllm_synth_params {
    const char *arch;          /* "qwen3", "qwen3vl", "llama", "qwen3moe" or "qwen2moe"; NULL (default): the
                                  shape's own, else qwen3 */
    const char *shape;         /* a named shape (see pocketllm_synth_shape_name) or NULL */
    /* explicit dimensions; 0 keeps the named shape's value (all are
     * required when shape is NULL) */
    uint32_t n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff;
    uint32_t type;             /* weight matrices: f32 (0), f16 (1) or bf16 (30); norms stay f32 */
    int untied;                /* write a separate output.weight */
    uint64_t seed;
    const char *vocab_path;    /* copy tokenizer.* from this GGUF; NULL = built-in byte-level vocabulary */
    const char *template_path; /* embed this file as tokenizer.chat_template; NULL = none */
    /* progress while writing (bytes done, bytes total); may be NULL */
    void (*progress)(void *user, uint64_t done, uint64_t total);
    void *progress_user;
    /* Mixture of experts (arch qwen3moe / qwen2moe; refused for the dense
     * ones): expert count, experts used per token, each expert's FFN width,
     * and qwen2moe's shared expert's FFN width; 0 keeps the shape's value.
     * With a MoE arch, n_ff is only written as feed_forward_length (0: the
     * shape's, else n_ff_exp * n_expert_used). */
    uint32_t n_expert, n_expert_used, n_ff_exp, n_ff_shexp;
    /* A quantized rung written directly: a recipe or a tensor type as
     * pocketllm_quantize_params.type takes them ("Q4_K_M", "IQ2_XXS",
     * "q8_0", ...).  Every tensor gets the type llama-quantize would give it
     * when quantizing this model's f16 file (recipes that llama.cpp only
     * makes with an importance matrix are planned as if one was given), and
     * random valid blocks of that type; `type` is then ignored.  NULL: every
     * matrix in `type`. */
    const char *quant;
} pocketllm_synth_params;

POCKETLLM_API pocketllm_synth_params pocketllm_synth_default_params(void);
/* Name and one-line description of named shape i, NULL past the last. */
POCKETLLM_API const char *pocketllm_synth_shape_name(uint32_t i);
POCKETLLM_API const char *pocketllm_synth_shape_summary(uint32_t i);
/* Bytes the file will have, without writing it. */
POCKETLLM_API pocketllm_status pocketllm_synth_size(const pocketllm_synth_params *p, uint64_t *bytes);
/* Write the checkpoint to path (atomically: nothing is left on failure). */
POCKETLLM_API pocketllm_status pocketllm_synth(const pocketllm_synth_params *p, const char *path);

/* The vision tower of a multimodal model -- an "mmproj" GGUF laid out as
 * llama.cpp's converter writes it, which llama.cpp's libmtmd loads -- with
 * random weights, at a named shape: "qwen3vl-2b" (Qwen3-VL-2B's vision
 * encoder, patch merger and DeepStack mergers; its output width is 2048 x
 * (1 + the DeepStack taps kept), which the text model's input width must
 * equal).  Deterministic like pocketllm_synth; zero-initialise and set
 * shape.  (ABI 2.1) */
typedef struct pocketllm_synth_mmproj_params {
    const char *shape;  /* "qwen3vl-2b"; or "qwen3asr-0.6b" / "qwen3asr-1.7b": Qwen3-ASR's audio tower
                           (projector qwen3a) */
    uint32_t type;      /* weight matrices: f32 (0) or f16 (1), audio also bf16 (30); norms, biases, position
                           table stay f32, the audio conv kernels and conv_out f16 (as the converter) */
    uint32_t n_layer;   /* vision / audio blocks, 0 = the shape's; DeepStack taps past the last are dropped */
    uint64_t seed;
    void (*progress)(void *user, uint64_t done, uint64_t total); /* may be NULL */
    void *progress_user;
} pocketllm_synth_mmproj_params;

/* Write the mmproj file to path (atomically).  (ABI 2.1) */
POCKETLLM_API pocketllm_status pocketllm_synth_mmproj(const pocketllm_synth_mmproj_params *p, const char *path);

/* ------------------------------------------------------------------ */
/* Quantization: a checkpoint down the width ladder                    */
/* ------------------------------------------------------------------ */

/* Rewrite an f32/f16/bf16 checkpoint with its matrices quantized, making
 * the choices llama.cpp v0.4.0's llama-quantize makes: which tensors are
 * quantized, which type each gets under a recipe, the fallbacks for rows
 * that are not whole blocks, the metadata written.  The tensor data is
 * byte-equal to llama.cpp's quantization of the same rows. */

/* Progress: called from the calling thread after each tensor is written
 * (or, in a dry run, planned) and, within a large tensor, after each slab
 * of its rows (tensor then still counts the tensors complete). */
typedef struct pocketllm_quantize_progress {
    uint64_t tensor;        /* tensors written so far (0..n_tensors) */
    uint64_t n_tensors;
    const char *name;       /* the tensor just written */
    uint32_t from_type;     /* its type in the input and in the output */
    uint32_t to_type;
    uint64_t bytes_done;    /* input tensor bytes processed so far, of bytes_total */
    uint64_t bytes_total;
    uint64_t out_bytes_done; /* output tensor bytes written (or planned) so far */
} pocketllm_quantize_progress;

typedef struct pocketllm_quantize_params {
    /* A recipe as llama-quantize spells it (no lower-case letter: "Q4_K_M",
     * "IQ2_XS", "Q8_0", ...; see pocketllm_quantize_name) or a tensor type as
     * ggml spells it (with a lower-case letter, any case after that: "q4_K",
     * "iq4_nl", "f16"), which quantizes every quantizable tensor to that type
     * (implies pure). */
    const char *type;
    int pure;              /* llama-quantize --pure: no per-tensor mixture, base type everywhere */
    int leave_output;      /* llama-quantize --leave-output-tensor: output.weight stays as it is */
    int allow_requantize;  /* allow a quantized input tensor to change type (decoded, then re-encoded) */
    const char *imatrix;   /* importance-matrix file (GGUF or legacy .dat), or NULL */
    int n_threads;         /* 0 = the physical core count */
    int dry_run;           /* plan only: report every tensor's type through progress, write
                            * nothing (out_path may be NULL); types this build cannot encode
                            * yet are reported rather than refused */
    void (*progress)(void *user, const pocketllm_quantize_progress *p); /* may be NULL */
    void *progress_user;
} pocketllm_quantize_params;

POCKETLLM_API pocketllm_quantize_params pocketllm_quantize_default_params(void);

/* Quantize the checkpoint at in_path into out_path.  The input is read one
 * tensor at a time through its memory mapping and the output streamed, so
 * memory stays near one tensor's worth.  The output is written atomically:
 * on any failure nothing is left at out_path.  Refused (with a one-line
 * message): an unknown type (POCKETLLM_ERR_INVALID_ARGUMENT), a file that is
 * not a model, an IQ1/IQ2/IQ3_XXS (or Q2_K_S) recipe without an importance
 * matrix, an imatrix whose sizes do not match the model or that matches
 * none of its matrices, a quantized input tensor that would change type
 * without allow_requantize, a type this build cannot encode yet
 * (POCKETLLM_ERR_UNSUPPORTED). */
POCKETLLM_API pocketllm_status pocketllm_quantize(const char *in_path, const char *out_path,
                                                  const pocketllm_quantize_params *params);

/* The names pocketllm_quantize accepts as type: entry i (recipes first,
 * then the tensor types llama.cpp can write a file of), NULL past the last.
 * *is_recipe (when not NULL) says which; *summary (when not NULL) gets a
 * one-line description (for a type this build cannot encode yet, it says
 * so). */
POCKETLLM_API const char *pocketllm_quantize_name(uint32_t i, int *is_recipe, const char **summary);
/* Whether `type` names a recipe or tensor type pocketllm_quantize accepts. */
POCKETLLM_API int pocketllm_quantize_type_known(const char *type);

/* ------------------------------------------------------------------ */
/* Evaluation: perplexity, KL divergence, importance matrix, fit       */
/* ------------------------------------------------------------------ */

/* Bytes a session holds: its KV cache, activation scratch, logits rows
 * and the backend's own scratch -- the sizes it allocated, summed. */
POCKETLLM_API uint64_t pocketllm_session_memory(const pocketllm_session *s);

/* Progress of a pass over a text: windows done of the total, and the
 * perplexity so far. */
typedef void (*pocketllm_eval_progress_fn)(void *user, uint32_t done, uint32_t total, double ppl);

/* Perplexity as llama.cpp's llama-perplexity computes it: the text is
 * tokenized (add_special, no parse_special), cut into windows of n_ctx
 * tokens (the text must hold at least two), the first token of each window
 * replaced by BOS when the vocabulary adds one; each window is evaluated
 * from an empty cache and only its second half is scored (positions
 * n_ctx/2 .. n_ctx-2 predict the next token), so every scored token has
 * at least n_ctx/2 tokens of context.  PPL = exp(mean negative
 * log-likelihood).
 *
 * Saved log-probabilities (save_logits) hold the tokens and, for every
 * scored position, the log-softmax of the logits, in one of two layouts:
 *   f32: "PLLOGP32", u32 version 1, u32 n_ctx, u32 n_vocab, u32 n_chunk,
 *        i32 tokens[n_chunk * n_ctx], then per scored position n_vocab f32
 *        log-probabilities -- exact: a model against its own file gives KL 0;
 *   u16: llama.cpp's --kl-divergence-base file, byte for byte ("_logits_",
 *        i32 n_ctx, n_vocab, n_chunk, the tokens, then per position two f32
 *        (scale, minimum) and n_vocab u16 steps, padded to an even count,
 *        covering the top 16 nats) -- half the size, log-probabilities within
 *        1.3e-4, readable by llama-perplexity.
 * Auto picks f32 up to 65536 tokens of vocabulary and u16 above (a f32 row
 * of a 151936-token vocabulary is 594 KiB).
 *
 * With kl_base, the file's window size, vocabulary and tokens must match
 * this run's; the result then adds the base's perplexity, the mean KL
 * divergence KL(base || model) per scored position with its percentiles, and
 * how often both put the same token first. */
enum {
    POCKETLLM_LOGITS_AUTO = 0,
    POCKETLLM_LOGITS_F32 = 1,
    POCKETLLM_LOGITS_U16 = 2
};

typedef struct pocketllm_perplexity_params {
    uint32_t n_ctx;         /* window; 0 = 512 (llama-perplexity's default) */
    uint32_t max_chunks;    /* windows to evaluate; 0 = all the text holds */
    uint32_t kv_type;       /* as pocketllm_session_params (1 = f16, the default) */
    int n_threads;          /* 0 = the model's */
    const char *save_logits; /* write the log-probabilities here, or NULL */
    uint32_t save_type;     /* POCKETLLM_LOGITS_* */
    const char *kl_base;    /* compare against this saved file, or NULL */
    pocketllm_eval_progress_fn progress; /* may be NULL */
    void *progress_user;
    uint32_t kv_type_v;     /* (ABI 2.8) as pocketllm_session_params (POCKETLLM_KV_AS_K = kv_type) */
    int flash_attn;         /* (ABI 2.8) as pocketllm_session_params */
} pocketllm_perplexity_params;

typedef struct pocketllm_perplexity_result {
    uint64_t n_tokens;      /* tokens of the text */
    uint32_t n_ctx, n_chunks;
    uint64_t n_scored;      /* positions scored */
    double ppl, ppl_err;    /* perplexity and its standard error, as llama.cpp prints them */
    int has_kl;             /* the fields below are set (kl_base was given) */
    double ppl_base;        /* the base model's perplexity on the same positions */
    double kl_mean, kl_err; /* mean KL divergence (nats) and its standard error */
    double kl_median, kl_p90, kl_p99, kl_max;
    double top1, top1_err;  /* fraction of positions where the top token agrees */
} pocketllm_perplexity_result;

POCKETLLM_API pocketllm_perplexity_params pocketllm_perplexity_default_params(void);
POCKETLLM_API pocketllm_status pocketllm_perplexity(pocketllm_model *model, const char *text, size_t len,
                                                    const pocketllm_perplexity_params *params,
                                                    pocketllm_perplexity_result *out);

/* The importance matrix, as llama.cpp's llama-imatrix collects it: the
 * text is cut into windows as for perplexity, every window evaluated with
 * every position's output, and for every matrix multiplication by a
 * weight whose name starts with "blk." (and output.weight with
 * process_output) the squares of each input column summed over all tokens,
 * with the token count.  Written in llama.cpp's GGUF imatrix format:
 * tensors "<weight>.in_sum2" (f32, n_in) and "<weight>.counts" (f32, 1), in
 * name order, general.type = "imatrix", imatrix.datasets, imatrix.chunk_count
 * and imatrix.chunk_size -- the file llama-quantize --imatrix and
 * pocketllm_quantize read.  The perplexity of the same pass goes to
 * *ppl_out (may be NULL). */
typedef struct pocketllm_imatrix_params {
    uint32_t n_ctx;         /* window; 0 = 512 (llama-imatrix's default); at least 16 */
    uint32_t max_chunks;    /* 0 = all */
    int process_output;     /* collect output.weight too (llama-imatrix --process-output) */
    int parse_special;      /* tokenize special-token text (llama-imatrix --parse-special) */
    int n_threads;          /* 0 = the model's */
    const char *dataset;    /* recorded in imatrix.datasets (the text file's name); NULL = none */
    pocketllm_eval_progress_fn progress;
    void *progress_user;
} pocketllm_imatrix_params;

POCKETLLM_API pocketllm_imatrix_params pocketllm_imatrix_default_params(void);
POCKETLLM_API pocketllm_status pocketllm_imatrix(pocketllm_model *model, const char *text, size_t len,
                                                 const pocketllm_imatrix_params *params, const char *out_path,
                                                 double *ppl_out);

/* Fit: the answer to "it does not fit" -- never offload, never split; go
 * down the width ladder.  The rungs, best first: Q4_K_M, Q3_K_M, Q2_K,
 * IQ2_XS, IQ2_XXS, IQ1_M, IQ1_S, TQ1_0 (pocketllm_fit_rung_recipe).  Each
 * rung walked is quantized from the source (f32/f16/bf16) with the
 * importance matrix (given, or collected from the evaluation text), then
 * opened with a session of n_ctx positions and one token evaluated, and its
 * memory measured: the file's mapping plus the heap the engine allocated
 * for the model and the session (tokenizer, KV cache, scratch).  With an
 * evaluation text each rung's KL divergence and top-1 agreement against the
 * source are measured as pocketllm_perplexity does.  The chosen rung is the
 * first (best) whose memory fits the budget; it is written to out_path.
 * Without all, the walk stops there.
 *
 * With a device ("vulkan", "vulkan:N") every rung (and the source) is
 * opened on that device, device_memory passed through as the model's cap,
 * and its memory is what the device holds (pocketllm_model_device's used
 * bytes) after the model, its session of n_ctx positions and one evaluated
 * token: weights_bytes = the device bytes of the weights, heap_bytes = what
 * the session added there (KV cache, activations, logits), total_bytes =
 * both; host memory is not counted.  The budget is memory when given (at
 * most what the device offers), else the device's own budget: device_memory,
 * or all the device reports.  A rung the device refuses (its weights or its
 * session do not fit: POCKETLLM_ERR_NO_MEMORY) is a row that does not fit --
 * measured = 1, fits = 0, the refused part's bytes 0 (its need is more than
 * the budget), the note saying which -- not an error.  The evaluation runs
 * on the device too; the source's (the log-probabilities and importance
 * matrix every rung is scored against) runs on the CPU when the device
 * cannot hold the source.
 *
 * (ABI 2.4) The source may be quantized already: every rung is then
 * requantized from it (decoded and encoded again, as llama-quantize
 * --allow-requantize does; it loses what the source lost and its own), a
 * rung larger than the source is not made, and a quantized source that
 * fits the budget is the answer as it is (chosen = 0, copied to out_path).
 * The quality reference -- the
 * log-probabilities every rung is scored against, and the importance
 * matrix collected with them -- is the source when its need fits
 * machine_memory (0: this host's physical memory), else the first rung
 * whose need does: result.reference names its row, and rows above it are
 * not scored.  Rungs are made one at a time in work_dir and removed unless
 * chosen: the disk holds the source and at most two rungs; a rung that the
 * work folder has no room for is refused before it is written.
 *
 * With plan, no rung is made for the decision: each rung's file is
 * computed from the quantization plan (the bytes pocketllm_quantize would
 * write: its header and every tensor at its planned type; an IQ recipe
 * planned as made with an importance matrix when none is given, that
 * matrix's few metadata bytes not counted) and its heap is the source's,
 * measured (model, session of n_ctx positions, one token: the session's
 * sizes do not depend on the weights' types); every rung is computed and
 * rows say computed = 1.  With plan_layers the source's layers are
 * repeated to that depth (they must be alike): a file cut to a few layers
 * answers for the whole model, the KV cache and tensor table of the added
 * layers computed.  An evaluation text then still makes each rung, of the
 * source as it is (the cut file), to score it; the reference is chosen by
 * the computed needs. */
typedef struct pocketllm_fit_row {
    const char *recipe;     /* "Q4_K_M", ...; "source" for the unquantized row */
    const char *rung;       /* "Q4", "Q3", "Q2", "IQ2", "IQ1", "ternary"; "-" for the source */
    int measured;           /* 0: skipped (see note); 1: it has its numbers (computed says how) */
    uint64_t file_bytes;
    uint64_t weights_bytes; /* the file mapping the weights are used from (on a device: the
                             * device bytes of the uploaded weights) */
    uint64_t heap_bytes;    /* heap allocated opening the model and its session (on a device:
                             * the device bytes the session added) */
    uint64_t session_bytes; /* of which the session (pocketllm_session_memory) */
    uint64_t total_bytes;   /* weights_bytes + heap_bytes: what it needs (0 when a device
                             * refused it: more than the budget) */
    int fits;               /* total_bytes <= the budget (0 when a device refused it) */
    int evaluated;          /* the evaluation fields are set */
    double ppl, kl_mean, kl_p99, top1;
    const char *same_as;    /* an earlier rung whose tensors got the same types (the same file), or NULL */
    const char *note;       /* why skipped, or a remark; NULL if none */
    char types[160];        /* the tensor types of the file and how many of each: "f32:11 q4_K:25 ..." */
    uint64_t budget;        /* the budget the row was held to (on a device: --memory at most
                             * what the device offers, else the device's) */
    uint64_t vision_bytes;  /* with an mmproj: the tower's share, already in total_bytes */
    int computed;           /* (ABI 2.4) the bytes are computed (plan), not measured */
    int reference;          /* (ABI 2.4) this row is the one every score is against */
} pocketllm_fit_row;

typedef struct pocketllm_fit_params {
    uint64_t memory;        /* the budget in bytes; 0 with a device: the device's budget */
    uint32_t n_ctx;         /* positions the session must hold; 0 = as pocketllm_session_new */
    uint32_t kv_type;
    const char *eval_text;  /* NULL: no KL divergence measured */
    size_t eval_len;
    uint32_t eval_ctx;      /* evaluation window; 0 = 512 */
    uint32_t eval_chunks;   /* 0 = all */
    const char *imatrix;    /* importance matrix file; NULL = collected from eval_text */
    const char *out_path;   /* write the chosen rung here; NULL = report only */
    const char *work_dir;   /* where rung files are made; NULL = out_path's folder, else $TMPDIR */
    int all;                /* walk every rung, even below the one chosen */
    int n_threads;          /* 0 = the physical cores */
    void (*on_row)(void *user, const pocketllm_fit_row *row); /* each row as it is measured */
    void (*progress)(void *user, const char *what);          /* a line of progress; may be NULL */
    void *user;
    const char *device;     /* NULL or "cpu": fit the host; "vulkan", "vulkan:N": fit that
                             * device (see above) */
    uint64_t device_memory; /* with a device: the most bytes of it a model may use (as
                             * pocketllm_model_params.device_memory); 0 = all it reports */
    const char *mmproj;     /* a vision tower to count beside every rung (its weights as they
                             * are in the file, and the activations of the largest image
                             * image_max_tokens and the context allow), or NULL */
    uint32_t image_max_tokens; /* merged tokens of the largest image; 0 = 4096 (the default) */
    /* (ABI 2.4) */
    int plan;               /* compute every rung instead of making it (see above) */
    uint32_t plan_layers;   /* with plan: compute the model at this many layers (its layers
                             * repeated); 0 = the source's own */
    uint64_t machine_memory; /* what the quality reference must fit in; 0 = this host's memory */
    /* (ABI 2.8) */
    uint32_t kv_type_v;     /* as pocketllm_session_params (POCKETLLM_KV_AS_K = kv_type) */
    int flash_attn;         /* as pocketllm_session_params (a quantized V needs 1) */
    /* (ABI 2.9) */
    int kv_auto;            /* narrow the cache before the weights: a row whose session does
                             * not fit with kv_type/kv_type_v is measured again with a q8_0
                             * cache, then a q4_0 one (K and V, flash attention), and counts
                             * with the first that fits -- the context is kept and the rung
                             * too, at the cost of the cache's width.  The row's cache is in
                             * the result's row_kv_k/row_kv_v.  Not with plan. */
} pocketllm_fit_params;

typedef struct pocketllm_fit_result {
    int chosen;             /* index of the chosen rung (0: a quantized source as it is), -1 when none fits */
    const char *recipe;     /* its recipe, or NULL */
    uint32_t n_ctx;         /* positions the sessions were measured with */
    uint32_t n_rows;        /* rows in rows[]: the source, then each rung walked */
    pocketllm_fit_row rows[16];
    uint64_t budget;        /* the budget every row was held to */
    /* with an mmproj: the tower's weights (its file's mapping plus what opening it
     * allocates, measured) and the activations of one image of vision_tokens merged
     * tokens (computed from what the tower allocates per patch: measuring the
     * largest image would mean running it); their sum is every row's vision_bytes */
    uint64_t vision_weights_bytes, vision_image_bytes;
    uint32_t vision_tokens, vision_square_side;
    /* (ABI 2.4) */
    int reference;          /* the row every score is against (0: the source), -1 when none */
    uint64_t machine_memory; /* the memory the reference had to fit in */
    uint32_t n_layer;       /* the source's layers */
    uint32_t plan_layers;   /* with plan: the layers the rows were computed for */
    int source_quantized;   /* the source was quantized: the rungs are requantized from it */
    /* (ABI 2.9) the cache each row was measured (and scored) with, as
     * POCKETLLM type ids; with kv_auto a narrower one than asked where the
     * asked one did not fit, and row_asked_bytes[i] then the row's need
     * with the asked cache (0 when the row kept it).  A row passed to
     * on_row points into rows[], so its index is row - rows. */
    uint32_t row_kv_k[16], row_kv_v[16];
    uint64_t row_asked_bytes[16];
} pocketllm_fit_result;

POCKETLLM_API pocketllm_fit_params pocketllm_fit_default_params(void);
/* Recipe and rung name of rung i, NULL past the last. */
POCKETLLM_API const char *pocketllm_fit_rung_recipe(uint32_t i, const char **rung);
/* Walk the ladder.  A model that fits at no rung is not an error: chosen is
 * -1 (and nothing is written).  Refused: a budget below 1 MiB or above
 * 1 PiB, a device that cannot be opened, plan with a device or an
 * out_path, plan_layers without plan or with layers that are not alike, a
 * work folder without room for a rung. */
POCKETLLM_API pocketllm_status pocketllm_fit(const char *model_path, const pocketllm_fit_params *params,
                                             pocketllm_fit_result *out);

/* ------------------------------------------------------------------ */
/* The host: CPU, memory, accelerators                                 */
/* ------------------------------------------------------------------ */

enum {
    POCKETLLM_CPU_SSE42 = 1u << 0,
    POCKETLLM_CPU_AVX = 1u << 1,
    POCKETLLM_CPU_AVX2 = 1u << 2,
    POCKETLLM_CPU_FMA = 1u << 3,
    POCKETLLM_CPU_F16C = 1u << 4,
    POCKETLLM_CPU_AVX512F = 1u << 5,
    POCKETLLM_CPU_AVX512BW = 1u << 6,
    POCKETLLM_CPU_AVX512VL = 1u << 7,
    POCKETLLM_CPU_AVX512VNNI = 1u << 8,
    POCKETLLM_CPU_AVX512BF16 = 1u << 9,
    POCKETLLM_CPU_AVXVNNI = 1u << 10,
    POCKETLLM_CPU_NEON = 1u << 11,
    POCKETLLM_CPU_ARM_DOTPROD = 1u << 12,
    POCKETLLM_CPU_ARM_FP16 = 1u << 13, /* half-precision vector arithmetic (Armv8.2-A FP16) */
    POCKETLLM_CPU_ARM_I8MM = 1u << 14, /* SMMLA/UMMLA int8 matrix multiply (Armv8.6-A) */
    POCKETLLM_CPU_ARM_BF16 = 1u << 15  /* BFDOT/BFMMLA */
};

typedef struct pocketllm_cpu_info {
    char model[128];          /* brand string, or "unknown" */
    char arch[16];            /* "x86_64", "aarch64", ... */
    uint32_t physical_cores;  /* cores, not hardware threads */
    uint32_t logical_cpus;    /* hardware threads this process may use */
    uint64_t memory_bytes;    /* physical memory (or the cgroup limit, if lower) */
    uint64_t memory_available_bytes;
    uint32_t features;        /* POCKETLLM_CPU_* bits usable here (OS support checked) */
} pocketllm_cpu_info;

POCKETLLM_API pocketllm_status pocketllm_cpu_info_get(pocketllm_cpu_info *out);
/* Name of one POCKETLLM_CPU_* bit ("avx2"), NULL for a bit with no name. */
POCKETLLM_API const char *pocketllm_cpu_feature_name(uint32_t bit);
/* The CPU kernel tier this process runs ("scalar", "avx2", "avx512",
 * "neon", "dotprod", "i8mm"): the best the CPU supports, capped by the
 * environment variable POCKETLLM_CPU_TIER when set.  (ABI 2.1) */
POCKETLLM_API const char *pocketllm_cpu_kernel_tier(void);
/* The tiers this CPU could run, lowest first, space-separated ("scalar
 * neon dotprod"), whatever the cap.  (ABI 2.1) */
POCKETLLM_API const char *pocketllm_cpu_kernel_tiers(void);

typedef struct pocketllm_cuda_device {
    char name[128];
    uint64_t memory_bytes;
    int compute_major, compute_minor;
} pocketllm_cuda_device;

typedef struct pocketllm_cuda_info {
    int driver_loaded;        /* libcuda could be loaded and initialised */
    int driver_version;       /* e.g. 13000 for CUDA 13.0, 0 if unknown */
    int device_count;
    pocketllm_cuda_device devices[8];
    char reason[256];         /* why there is no usable device, "" if there is one */
} pocketllm_cuda_info;

/* Probe the NVIDIA driver at run time (dlopen), needing nothing installed. */
POCKETLLM_API pocketllm_status pocketllm_cuda_probe(pocketllm_cuda_info *out);

/* Vulkan devices, as the Vulkan backend sees them. */
typedef struct pocketllm_vulkan_device {
    char name[256];
    char type[16];            /* "discrete", "integrated", "virtual", "cpu" (a software
                               * rasterizer such as Mesa's lavapipe) or "other" */
    char driver[600];         /* driver name and version text */
    char api_version[16];     /* "1.3.230" */
    uint32_t vendor_id, device_id;
    uint32_t n_heaps;
    uint64_t heap_bytes[8];
    int heap_device_local[8];
    uint64_t device_local_bytes; /* the largest device-local heap: the budget of a model */
    uint32_t subgroup_size;   /* as the driver reports it (lavapipe 8, NVIDIA 32, AMD 64) */
    int fp16;                 /* shaderFloat16 */
    int int8_dot;             /* shaderIntegerDotProduct: the int8 dot-product shaders run */
    int int8_dot_accelerated; /* ... and the driver says they are fast */
    int cooperative_matrix;   /* VK_KHR_cooperative_matrix is offered */
    int cooperative_matrix_nv;/* VK_NV_cooperative_matrix is offered */
    int usable;               /* the backend can run on it */
    char why_not[160];        /* when not usable */
} pocketllm_vulkan_device;

typedef struct pocketllm_vulkan_info {
    int loader_loaded;        /* libvulkan.so.1 could be loaded */
    char instance_version[16];
    int device_count;         /* devices listed (at most 8) */
    pocketllm_vulkan_device devices[8];
    char reason[256];         /* why there is no usable device, "" if there is one */
} pocketllm_vulkan_info;

/* Ask the Vulkan loader (dlopen, at run time: nothing is needed to build or
 * run without it) which devices there are. */
POCKETLLM_API pocketllm_status pocketllm_vulkan_probe(pocketllm_vulkan_info *out);

/* ------------------------------------------------------------------ */
/* Backends, ops and architectures: what this build can run            */
/* ------------------------------------------------------------------ */

typedef enum pocketllm_backend_state {
    POCKETLLM_BACKEND_IMPLEMENTED = 0, /* built in and usable on a matching device */
    POCKETLLM_BACKEND_DECLARED = 1     /* named and planned, not built in this binary */
} pocketllm_backend_state;

typedef struct pocketllm_backend_info {
    const char *name;        /* "cpu", "cuda", ... */
    const char *device_class;/* what it runs on */
    pocketllm_backend_state state;
    const char *note;        /* for a declared backend: the runtime it waits for */
} pocketllm_backend_info;

POCKETLLM_API uint32_t pocketllm_backend_count(void);
POCKETLLM_API pocketllm_status pocketllm_backend_get(uint32_t i, pocketllm_backend_info *out);

/* The op vocabulary of the kernel ABI. */
POCKETLLM_API uint32_t pocketllm_op_count(void);
POCKETLLM_API const char *pocketllm_op_name(uint32_t op);
POCKETLLM_API const char *pocketllm_op_summary(uint32_t op);
/* Whether `backend` (by name) has a kernel for `op` with weights of
 * `type` (ggml id; ops without weights ignore it and use type 0). */
POCKETLLM_API int pocketllm_op_supported(const char *backend, uint32_t op, uint32_t type);
/* Whether the op takes a weight tensor whose type selects the kernel. */
POCKETLLM_API int pocketllm_op_has_weight(uint32_t op);

/* Model architectures the engine can run (GGUF general.architecture). */
POCKETLLM_API uint32_t pocketllm_arch_count(void);
POCKETLLM_API const char *pocketllm_arch_name(uint32_t i);
POCKETLLM_API const char *pocketllm_arch_summary(uint32_t i);

/* ------------------------------------------------------------------ */
/* Chat templates                                                      */
/* ------------------------------------------------------------------ */

/* A chat template (the Jinja text a GGUF keeps in tokenizer.chat_template)
 * parsed for rendering.  Rendering is byte-identical to Python's jinja2 as
 * Hugging Face's apply_chat_template configures it.  The template is
 * treated as untrusted: it can only read the data it is given, and every
 * render is bounded in time, memory and output.  A template using a
 * construct this interpreter does not reproduce exactly is refused here,
 * with the construct and its line and column named (POCKETLLM_ERR_UNSUPPORTED);
 * a template jinja2 itself rejects gives POCKETLLM_ERR_FORMAT. */
typedef struct pocketllm_chat_template pocketllm_chat_template;

POCKETLLM_API pocketllm_status pocketllm_chat_template_new(const char *source, size_t len,
                                                           pocketllm_chat_template **out);
POCKETLLM_API void pocketllm_chat_template_free(pocketllm_chat_template *t);

/* One message.  role and content become the keys "role" and "content"
 * (content NULL: None); each other field becomes a key only when set.
 * tool_calls_json is a JSON array as in OpenAI's API, e.g.
 * [{"id":"c1","type":"function","function":{"name":"f","arguments":{...}}}]. */
typedef struct pocketllm_chat_message {
    const char *role;
    const char *content;
    const char *reasoning_content;
    const char *tool_calls_json;
    const char *tool_call_id;
    const char *name;
} pocketllm_chat_message;

#define POCKETLLM_CHAT_NOW_CLOCK INT64_MIN

typedef struct pocketllm_chat_options {
    int add_generation_prompt; /* end with the opening of an assistant turn */
    int enable_thinking;       /* -1: not passed to the template; 0 false; 1 true */
    const char *bos_token;     /* NULL: not passed */
    const char *eos_token;     /* NULL: not passed */
    const char *tools_json;    /* JSON array of tool definitions; NULL: tools is None */
    const char *extra_json;    /* JSON object of more template variables; NULL: none */
    int64_t now;               /* strftime_now()'s time (seconds since the epoch, shown
                                  in local time); POCKETLLM_CHAT_NOW_CLOCK: the clock */
} pocketllm_chat_options;

/* add_generation_prompt 0, enable_thinking -1, no tokens, tools or extras,
 * the clock. */
POCKETLLM_API pocketllm_chat_options pocketllm_chat_default_options(void);

/* Render n messages.  *out receives the prompt (NUL-terminated; free it with
 * pocketllm_chat_free) and *len its length.  A conversation the template
 * rejects (raise_exception, or an error Python's jinja2 would raise too)
 * fails with a message saying why. */
POCKETLLM_API pocketllm_status pocketllm_chat_render(const pocketllm_chat_template *t,
                                                     const pocketllm_chat_message *msgs, size_t n,
                                                     const pocketllm_chat_options *opt, char **out, size_t *len);
/* The same with the messages as a JSON array of message objects (any keys,
 * as an OpenAI request carries them). */
POCKETLLM_API pocketllm_status pocketllm_chat_render_json(const pocketllm_chat_template *t, const char *messages_json,
                                                          const pocketllm_chat_options *opt, char **out, size_t *len);
POCKETLLM_API void pocketllm_chat_free(char *text);

/* Generated text split into reasoning and answer, for templates whose
 * models think inside <think>...</think> (Qwen3, QwQ, DeepSeek-R1...): the
 * split those templates themselves apply to an assistant message, so the
 * parts render back as generated.  prompt (may be NULL) is the rendered
 * prompt, which tells whether the generation started inside an open think
 * block.  Templates without think tags: all text is content.  Free with
 * pocketllm_chat_split_free. */
typedef struct pocketllm_chat_split {
    char *content;
    size_t content_len;
    char *reasoning;      /* NULL when there was none */
    size_t reasoning_len;
    int has_reasoning;
} pocketllm_chat_split;

POCKETLLM_API pocketllm_status pocketllm_chat_split_reasoning(const pocketllm_chat_template *t, const char *prompt,
                                                              const char *text, size_t len,
                                                              pocketllm_chat_split *out);
POCKETLLM_API void pocketllm_chat_split_free(pocketllm_chat_split *s);

/* (ABI 2.5) What a chat template tells about its models: whether they
 * think in <think> blocks, and how they call tools -- the format read from
 * the template's own text (Qwen3's <tool_call>{json}</tool_call>,
 * Qwen3-Coder's <function=...><parameter=...>, Llama 3's JSON reply,
 * Mistral's [TOOL_CALLS], ...), never from the model's name. */
enum { POCKETLLM_TOOLS_NONE = 0, POCKETLLM_TOOLS_UNSUPPORTED = 1, POCKETLLM_TOOLS_SUPPORTED = 2 };
typedef struct pocketllm_chat_caps {
    int think_tags;          /* writes <think>...</think> blocks */
    int tool_format;         /* POCKETLLM_TOOLS_*: NONE = the template has no tools */
    const char *tool_family; /* the format's name ("hermes", "qwen-xml", "llama3-json", ...) */
    int lists_tools;         /* the template shows the model the tools it is given */
    const char *trigger;     /* the text that starts a call ("<tool_call>"), NULL when the
                              * whole reply is the call (Llama 3's JSON); (ABI 2.6) "" when
                              * the generation prompt already ends with it (Functionary
                              * v3.2's ">>>"): the reply's first word says whether it is
                              * text or a call, so tool_choice auto's grammar
                              * (POCKETLLM_TOOLS_FOR_AUTO) applies from the first token,
                              * and replies are parsed even without tools (tools "[]") */
} pocketllm_chat_caps;
POCKETLLM_API void pocketllm_chat_template_caps(const pocketllm_chat_template *t, pocketllm_chat_caps *out);
/* (ABI 2.7) 1 when the template writes a call's function.arguments as
 * they are (it concatenates them: Functionary v3.2), so a caller must
 * pass them as the JSON text OpenAI sends; 0 when it formats them itself
 * (`| tojson`), as most do, and wants the object (llama-server's form).
 * Found at load by rendering a call both ways; rendering stays jinja2's. */
POCKETLLM_API int pocketllm_chat_template_arguments_as_text(const pocketllm_chat_template *t);

/* (ABI 2.5) GBNF (start rule root) that forces a call in the template's
 * format to one of the tools (OpenAI's array as JSON text), or to
 * only_name when not NULL; flags POCKETLLM_TOOLS_PARALLEL: one or more
 * calls.  Each function's arguments are held to its parameters schema.
 * (ABI 2.6) POCKETLLM_TOOLS_FOR_AUTO: the grammar for tool_choice auto --
 * the same, activated lazily at caps.trigger, except where that trigger
 * is "": then it also allows a text reply and applies from the start.
 * Free with pocketllm_free.  A template without a supported format, a bad
 * tools array or a schema keyword the compiler cannot honour fails, the
 * message naming it. */
enum { POCKETLLM_TOOLS_PARALLEL = 1, POCKETLLM_TOOLS_FOR_AUTO = 2 };
POCKETLLM_API pocketllm_status pocketllm_tools_grammar(const pocketllm_chat_template *t, const char *tools_json,
                                                       size_t len, const char *only_name, int flags, char **gbnf);

/* (ABI 2.5) A reply parsed into content and tool calls as it streams:
 * feed the reply's content (reasoning split off) in any pieces; events
 * come as soon as they are certain -- content (never any call markup),
 * the start of a call (index, a unique id, the function's name, once
 * whole and known), and fragments of its arguments (a JSON object's
 * text).  Feeding everything and then finishing gives the same calls. */
typedef struct pocketllm_tool_parser pocketllm_tool_parser;
enum { POCKETLLM_TOOL_CONTENT = 0, POCKETLLM_TOOL_CALL_START = 1, POCKETLLM_TOOL_ARGS = 2 };
typedef struct pocketllm_tool_event {
    int kind;          /* POCKETLLM_TOOL_* */
    int index;         /* the call's index (CALL_START, ARGS) */
    const char *text;  /* CONTENT: text; ARGS: a fragment of the arguments */
    size_t len;
    const char *name;  /* CALL_START */
    const char *id;    /* CALL_START */
} pocketllm_tool_event;
typedef void (*pocketllm_tool_event_fn)(void *user, const pocketllm_tool_event *ev);
/* tools_json (may be NULL: any name is taken) gives the names and the
 * parameter types; id_seed varies the call ids between replies. */
POCKETLLM_API pocketllm_status pocketllm_tool_parser_new(const pocketllm_chat_template *t, const char *tools_json,
                                                         size_t len, uint64_t id_seed, pocketllm_tool_parser **out);
POCKETLLM_API void pocketllm_tool_parser_feed(pocketllm_tool_parser *p, const char *text, size_t len,
                                              pocketllm_tool_event_fn fn, void *user);
/* 1 when the reply parsed; 0 when a call was botched (invalid JSON, an
 * unknown function, unterminated markup): then the whole reply is text
 * (pocketllm_tool_parser_error says why; _unsent is what no event carried). */
POCKETLLM_API int pocketllm_tool_parser_finish(pocketllm_tool_parser *p, pocketllm_tool_event_fn fn, void *user);
POCKETLLM_API int pocketllm_tool_parser_n_calls(const pocketllm_tool_parser *p);
POCKETLLM_API void pocketllm_tool_parser_call(const pocketllm_tool_parser *p, int i, const char **name, const char **id,
                                              const char **arguments);
/* The content around the calls; NULL when there is none (or only spaces). */
POCKETLLM_API const char *pocketllm_tool_parser_content(const pocketllm_tool_parser *p);
POCKETLLM_API const char *pocketllm_tool_parser_error(const pocketllm_tool_parser *p);
POCKETLLM_API const char *pocketllm_tool_parser_unsent(const pocketllm_tool_parser *p, size_t *len);
POCKETLLM_API void pocketllm_tool_parser_free(pocketllm_tool_parser *p);

/* (ABI 2.5) A JSON schema (len bytes of JSON; NULL: any JSON object) as
 * GBNF text with start rule root, as pocketllm_grammar_from_json_schema
 * compiles it.  Free with pocketllm_free. */
POCKETLLM_API pocketllm_status pocketllm_json_schema_to_gbnf(const char *schema, size_t len, char **gbnf);
/* (ABI 2.5) Free memory the library handed out as its caller's. */
POCKETLLM_API void pocketllm_free(void *p);

/* ------------------------------------------------------------------ */
/* Benchmarking (pocketllm bench)                                      */
/* ------------------------------------------------------------------ */

/* What a decode step of a model costs in memory traffic, for the
 * bandwidth bound `pocketllm bench` reports (tokens per second can be at
 * most read bandwidth / weight_bytes_per_token). */
typedef struct pocketllm_bench_info {
    uint64_t file_bytes;              /* size of the GGUF file */
    uint64_t weight_bytes;            /* all tensor data in the file */
    uint64_t weight_bytes_per_token;  /* tensor bytes one decode step reads: every
                                       * tensor, except a token-embedding table that is
                                       * only looked up (a separate output matrix exists);
                                       * of a mixture of experts' 3-D *_exps tensors only
                                       * the expert_used_count experts a token is routed to */
    uint64_t kv_bytes_per_position;   /* KV cache bytes per position, all layers, K and V */
} pocketllm_bench_info;

/* Fill *out for an open model (with weights) and a KV cache type (1 = f16,
 * 0 = f32, or (ABI 2.8) any type pocketllm_session_params takes), K and V
 * both of it (for K and V of two types, half of each one's figure). */
POCKETLLM_API pocketllm_status pocketllm_bench_model_info(const pocketllm_model *model, uint32_t kv_type,
                                                          pocketllm_bench_info *out);
/* The host's memory read bandwidth in bytes per second, measured by
 * reading the model's own tensor data with n_threads threads (0 = the
 * model's count): the best of three passes after one that pages it in.
 * Allocates nothing beyond the threads. */
POCKETLLM_API pocketllm_status pocketllm_bench_read_bandwidth(const pocketllm_model *model, int n_threads,
                                                              double *bytes_per_s);

/* One image through a vision tower, timed (`pocketllm bench --mmproj`):
 * the tower at `mmproj` is opened for `model`; the image is image_path, or
 * with NULL a synthetic width x height one; after one untimed run, each of
 * reps runs preprocesses it (token limit max_tokens, 0 = 4096) and encodes
 * it, and runs[r] gets that run's two times.  The tower's time is
 * libmtmd's mtmd_encode_chunk's counterpart, the preprocessing mtmd_tokenize's. */
typedef struct pocketllm_bench_image {
    uint32_t width, height;           /* the image */
    uint32_t prep_width, prep_height; /* after preprocessing (what the tower takes) */
    uint32_t n_tokens;                /* merged tokens out */
    double prep_ms, encode_ms;        /* this run's preprocessing and tower time */
} pocketllm_bench_image;

POCKETLLM_API pocketllm_status pocketllm_bench_image_encode(pocketllm_model *model, const char *mmproj,
                                                            const char *image_path, uint32_t width, uint32_t height,
                                                            uint32_t max_tokens, int reps, pocketllm_bench_image *runs);

/* An audio file through an audio tower, timed (`pocketllm bench --mmproj
 * --audio`): the tower at `mmproj` is opened for `model`; after one untimed
 * run, each of reps runs decodes audio_path (mono, resampled to 16 kHz),
 * makes its log-mel windows and encodes every window, and runs[r] gets that
 * run's three times -- the counterparts of libmtmd's
 * mtmd_helper_bitmap_init_from_file, mtmd_tokenize and mtmd_encode_chunk on
 * every audio chunk.  (ABI 2.3) */
typedef struct pocketllm_bench_audio {
    double seconds;                      /* the recording's length */
    uint32_t windows;                    /* mel windows (one tower encode each) */
    uint32_t n_tokens;                   /* the windows' tokens out */
    double decode_ms, mel_ms, encode_ms; /* this run's decode + resample, mel, tower time */
} pocketllm_bench_audio;

POCKETLLM_API pocketllm_status pocketllm_bench_audio_encode(pocketllm_model *model, const char *mmproj,
                                                            const char *audio_path, int reps,
                                                            pocketllm_bench_audio *runs);

#ifdef __cplusplus
}
#endif

#endif /* POCKETLLM_H */
