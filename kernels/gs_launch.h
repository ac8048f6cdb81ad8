/* What every launcher does around its kernel launches, so that each launch
 * is judged by its own result: the runtime's last error is per thread and
 * sticky until read, and an error some earlier call left there must not
 * make a launch that worked look failed (dispatch would then fall back to
 * cuBLAS into a C our kernel already updated). C and C++. */
#ifndef GS_LAUNCH_H
#define GS_LAUNCH_H

#include <cuda_runtime_api.h>

#include "gs_kernel.h"

/* Right before a launch: read away whatever error is pending. */
static inline void gs_launch_begin(void) { (void)cudaGetLastError(); }

/* Right after a launch made with <<<>>> (which returns nothing): its
 * status, from the error it left. `enqueued_before` is nonzero for a
 * launcher's second or later kernel: then a failure means an earlier
 * kernel of this call may already be writing D. The error is read, so it
 * cannot be taken for a later launch's. */
static inline gs_kstatus gs_launch_end(int enqueued_before)
{
  if (cudaGetLastError() == cudaSuccess) return GS_K_OK;
  return enqueued_before ? GS_K_FAILED_AFTER_ENQUEUE : GS_K_LAUNCH_FAILED;
}

/* The same for a launch that returns its error (cudaLaunchKernelEx). */
static inline gs_kstatus gs_launch_result(cudaError_t e, int enqueued_before)
{
  (void)cudaGetLastError();
  if (e == cudaSuccess) return GS_K_OK;
  return enqueued_before ? GS_K_FAILED_AFTER_ENQUEUE : GS_K_LAUNCH_FAILED;
}

/* The same for a launch made with programmatic dependent launch: an error
 * the attribute can cause (a driver, or a graph being captured, that
 * cannot take it) says so, so that the caller may try without. */
static inline gs_kstatus gs_launch_result_pdl(cudaError_t e)
{
  (void)cudaGetLastError();
  if (e == cudaSuccess) return GS_K_OK;
  return e == cudaErrorNotSupported || e == cudaErrorInvalidValue ||
                 e == cudaErrorStreamCaptureUnsupported
             ? GS_K_PDL_REFUSED
             : GS_K_LAUNCH_FAILED;
}

#endif
