/* Our kernels are loaded into a context by a thread of the shim's, never
 * inside a caller's GEMM call: CUDA loads modules lazily, and a load may
 * wait for the whole device, where a stream may be waiting for what the
 * caller does after the call returns (measured on the H200: a first call
 * on a stream held by a host function waited until the host gave up, 10 s;
 * with CUDA_MODULE_LOADING=EAGER, or with the modules already loaded, it
 * returned at once). */
#ifndef GS_LOADER_H
#define GS_LOADER_H

#include "context.h"

/* 1 when every kernel of ours is loaded into the context. Otherwise 0, and
 * a loader thread has been started for it (once per context); calls
 * forward until it is done. If the loading fails, every kernel is disabled
 * on the context (said once). */
int gs_kernels_ready(gs_ctx *ctx);

/* The same for the context of a stream (NULL: the current context's
 * default stream); -1 when the stream cannot be placed. For GPU checks,
 * which wait for it before counting what their calls do. */
int gs_kernels_ready_for(void *stream);

#endif
