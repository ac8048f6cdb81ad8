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

/* One thread spinning on the GPU's clock for `us` microseconds (at most
 * 100 ms) on stream s. 0 when launched; else the launch's error, cleared. */
int gs_hold_stream(cudaStream_t s, double us);

#ifdef __cplusplus
}
#endif

#endif
