/*
 * audio_api_internal.h -- the engine's view of a public pocketllm_audio
 * handle (audio_api.c): its mono 16 kHz samples.
 */
#ifndef PL_AUDIO_API_INTERNAL_H
#define PL_AUDIO_API_INTERNAL_H

#include "audio/audio_decode.h"
#include "pocketllm.h"

/* the rate every pocketllm_audio holds: Qwen3-ASR's */
#define PL_AUDIO_API_RATE 16000u

/* The samples of a (not NULL) handle; valid while it lives. */
const pl_audio_pcm *pl_audio_of(const pocketllm_audio *a);

#endif
