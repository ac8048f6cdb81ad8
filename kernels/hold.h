/* A kernel that keeps a stream busy for a while: timing queues its work
 * behind it, so that what it times starts back to back on the GPU, not
 * whenever the host gets it there (A/B mode's pairs, the benchmark's
 * samples). */
#ifndef GS_HOLD_H
#define GS_HOLD_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Load the hold kernel into the current context (CUDA loads kernels
 * lazily, and a load may wait for the whole device): 0 on success. */
int gs_hold_preload(void);

/* One thread spinning on the GPU's clock for `us` microseconds (at most
 * 100 ms) on stream s. 0 when launched; else the launch's error
 * (cudaError_t), cleared. */
int gs_hold_stream(cudaStream_t s, double us);

#ifdef __cplusplus
}
#endif

#endif
