/* Device resources of a context that the self-check and A/B mode use:
 * scratch from a private stream-ordered pool (cudaMallocFromPoolAsync /
 * cudaFreeAsync on the caller's stream, release threshold 0), so it never
 * comes from behind the application's allocator, never outlives the
 * comparison it serves, and never synchronizes the device; and, for the
 * self-check, pinned verdict slots with an event each. */
#ifndef GS_SCRATCH_H
#define GS_SCRATCH_H

#include <stddef.h>

#include "context.h"

/* This thread in relaxed capture mode for the calls between: what could
 * disturb another thread's global-mode capture (allocation, event queries)
 * is then allowed. */
typedef struct gs_relaxed { int saved; } gs_relaxed;
void gs_relax(gs_relaxed *r);
void gs_unrelax(gs_relaxed *r);

/* The pool, the verdict slots and their events, made once per context.
 * The caller holds ctx->lock and has entered the context. 0 when ready;
 * a failure is remembered and not retried. */
int gs_ctx_make_resources(gs_ctx *ctx);

/* `bytes` of scratch on `stream`, stream-ordered, from the context's pool
 * (made by gs_ctx_make_resources). 0 on success; -1 when the pool refused
 * (remembered: a request as large or larger is not tried again). */
int gs_scratch_get(gs_ctx *ctx, size_t bytes, void *stream, void **out);

/* A kernel's own scratch, from the context's kernel pool (which keeps
 * GEMMSHIM_SCRATCH_KEEP_MB across synchronizations), without the memory of
 * refusals: every request is tried (a moment of memory pressure must not
 * deny it for the rest of the process). */
int gs_scratch_try(gs_ctx *ctx, size_t bytes, void *stream, void **out);

/* Give it back, after the work queued on `stream` that uses it. */
void gs_scratch_put(void *p, void *stream);

#endif
