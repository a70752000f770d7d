/*
 * session_hooks.h -- what other modules inside the library may reach of a
 * session beyond the public API: its compute instance, so that an
 * evaluation (eval/imatrix.c) can observe the passes it runs.
 */
#ifndef PL_SESSION_HOOKS_H
#define PL_SESSION_HOOKS_H

#include "backend/compute.h"
#include "pocketllm.h"

/* The compute instance every pass of the session runs on. */
pl_compute *pl_session_compute(pocketllm_session *s);

#endif
