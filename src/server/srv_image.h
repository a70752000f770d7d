/*
 * srv_image.h -- the images of a chat request: the URL of an OpenAI
 * image_url content part turned into a decoded image, under the server's
 * rules -- data: URLs (base64, decoded strictly), file:// URLs only inside
 * the --allow-image-path folder, remote URLs never (the server fetches
 * nothing).  Every refusal and every image that does not decode is a 400
 * whose message starts with the part's name, decided while the request is
 * parsed, before any sequence is touched.
 */
#ifndef PL_SRV_IMAGE_H
#define PL_SRV_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "pocketllm.h"
#include "srv_model.h"
#include "srv_request.h"

/* Decode standard base64 (RFC 4648 alphabet, '=' padding required, no
 * whitespace, zero trailing bits).  *out (caller frees) holds *out_len
 * bytes.  false for anything else, and when the result would exceed
 * max_len bytes. */
bool srv_base64_decode(const char *s, size_t n, size_t max_len, unsigned char **out, size_t *out_len);

/* The image an image_url URL names; `part` (e.g.
 * "messages[1].content[2].image_url") begins every error message. */
bool srv_image_from_url(const srv_model *m, const char *url, const char *part, pocketllm_image **out, srv_error *e);

#endif
