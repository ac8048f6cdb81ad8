/* Host-side helpers shared by the launchers of the TMA kernels (sm_90a):
 * operand alignment, and the driver's tensor-map encoder, found at run time
 * (the library never links libcuda). Each translation unit keeps its own
 * copy of the looked-up pointer. */
#ifndef GS_SM90_HOST_H
#define GS_SM90_HOST_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>

static inline int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* cuTensorMapEncodeTiled from the driver, looked up once. pthread_once
 * publishes the pointer with the ordering a weakly ordered host (Arm)
 * needs: no thread sees the lookup done before it sees its result. NULL
 * when the driver lacks it. */
static pthread_once_t encode_once = PTHREAD_ONCE_INIT;
static PFN_cuTensorMapEncodeTiled_v12000 encode_fn;

static void encode_lookup(void) {
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                       &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    fn = NULL;
  }
  encode_fn = (PFN_cuTensorMapEncodeTiled_v12000)fn;
}

static PFN_cuTensorMapEncodeTiled_v12000 get_encode(void) {
  pthread_once(&encode_once, encode_lookup);
  return encode_fn;
}

#endif
