/* Host-side helpers shared by the launchers of the TMA kernels (sm_90a):
 * operand alignment, and the driver's tensor-map encoder, found at run time
 * (the library never links libcuda). Each translation unit keeps its own
 * copy of the looked-up pointer. */
#ifndef GS_SM90_HOST_H
#define GS_SM90_HOST_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <stdint.h>

static inline int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* cuTensorMapEncodeTiled from the driver, looked up once (a benign race:
 * every caller stores the same pointer). NULL when the driver lacks it. */
static PFN_cuTensorMapEncodeTiled_v12000 volatile encode_fn;
static volatile int encode_looked_up;

static PFN_cuTensorMapEncodeTiled_v12000 get_encode() {
  if (encode_looked_up) return encode_fn;
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                       &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    fn = nullptr;
  encode_fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  encode_looked_up = 1;
  return encode_fn;
}

#endif
