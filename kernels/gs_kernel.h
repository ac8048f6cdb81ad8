/* The contract between dispatch/ and every kernel launcher.
 *
 * A launcher takes a plain descriptor and returns a status. It knows nothing
 * of cuBLAS handles or entry points. Matrices are column-major, as in cuBLAS:
 * D (m x n) = alpha * op(A) * op(B) + beta * C (+ bias broadcast along
 * columns), op(A) is m x k, op(B) is k x n. */
#ifndef GS_KERNEL_H
#define GS_KERNEL_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_kstatus {
  GS_K_OK = 0,
  GS_K_UNSUPPORTED,    /* the launcher refuses this problem; nothing was
                          enqueued */
  GS_K_LAUNCH_FAILED,  /* the first (or only) launch failed: nothing was
                          enqueued, so the caller may fall back */
  GS_K_FAILED_AFTER_ENQUEUE, /* a later launch of a multi-kernel launcher
                                failed: what was enqueued before it may
                                write D, so nothing else may run into D */
  GS_K_NO_SCRATCH,     /* (dispatch's, never a launcher's) the scratch the
                          kernel needs could not be had: nothing was
                          enqueued, the caller may fall back */
  GS_K_PDL_REFUSED     /* the first launch, made with programmatic
                          dependent launch, failed with an error that
                          attribute can cause: nothing was enqueued; the
                          same call with no_pdl may work */
} gs_kstatus;

typedef struct gs_kernel_args {
  int64_t m, n, k;
  int trans_a, trans_b;       /* 0 = N, 1 = T, as cublasOperation_t */
  const void *A; int64_t lda;
  const void *B; int64_t ldb;
  const void *C; int64_t ldc; /* read only when beta != 0 */
  void *D; int64_t ldd;       /* output; may alias C (same ld then) */
  /* Scalars: host values, or device pointers when scalars_on_device. */
  int scalars_on_device;
  float alpha, beta;
  const float *alpha_dev, *beta_dev;
  const void *bias;           /* m elements added to every column, or NULL */
  /* Strided batches: `batch` products, item i's matrices at element
   * offsets i * stride_x from A, B, C and D. Only an entry whose table
   * row says it takes batches (gs_variant.takes_batch) is given more than
   * one item; 0 or 1 means one. */
  int64_t batch;
  int64_t stride_a, stride_b, stride_c, stride_d;
  int no_pdl;                 /* launch plainly, never with programmatic
                                 dependent launch (GEMMSHIM_PDL=0) */
  cudaStream_t stream;
  /* The caller's SM-count target (cublasSetSmCountTarget, cuBLASLt's
   * SM_COUNT_TARGET), 0 for none: a kernel whose variant says it honours
   * it keeps at most this many SMs busy. Others ignore it (the router
   * never gives them a call whose target is below the GPU's SM count). */
  int sm_limit;
  /* Where the launch goes: the device of the stream, and the identity of
   * its context (cuCtxGetId; 0 when unknown). A launcher keys what it sets
   * up once (function attributes) by the context: a context that was
   * destroyed and made again (cudaDeviceReset) has a new identity. */
  int device;
  uint64_t ctx_id;
  /* Device memory for a kernel whose table entry asks for scratch
   * (scratch_bytes): that many bytes, 16-byte aligned, this call's alone
   * until its work on `stream` is done; NULL for the others. */
  void *scratch;
} gs_kernel_args;

#ifdef __cplusplus
}
#endif
#endif
