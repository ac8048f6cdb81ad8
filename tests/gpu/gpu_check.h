/* What the GPU checks share: status checks that name the file and line.
 * A failed CUDA or cuBLAS call ends the check (these are test programs). */
#ifndef GS_GPU_CHECK_H
#define GS_GPU_CHECK_H

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../dispatch/loader.h"

#define CU(x)                                                                     \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

#define CB(x)                                                                     \
  do {                                                                            \
    cublasStatus_t s_ = (x);                                                      \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                            \
      fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

/* The real cuBLAS entry points, as a check reaches them past the shim
 * (dlsym(RTLD_NEXT, ...)). */
typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const float *, const float *, int, const float *, int,
                                   const float *, float *, int);
typedef cublasStatus_t (*dgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const double *, const double *, int, const double *, int,
                                   const double *, double *, int);
typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                    int, int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*ltmatmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                      const void *, cublasLtMatrixLayout_t, const void *,
                                      cublasLtMatrixLayout_t, const void *, const void *,
                                      cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                      const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);

/* n BF16 values in [-1, 1) from seed (rounded to nearest even), copied
 * into device memory d. */
static inline void gs_check_fill_bf16(uint16_t *d, size_t n, uint64_t seed)
{
  uint16_t *h = malloc(n * 2);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    float f = (float)((double)(seed >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    uint32_t u;
    memcpy(&u, &f, 4);
    h[i] = (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
  }
  CU(cudaMemcpy(d, h, n * 2, cudaMemcpyHostToDevice));
  free(h);
}

/* Our kernels load into a context on a thread of the shim's, and calls
 * forward (reason loading) until they are in: a check waits for that (at
 * most 30 s) before it counts what its calls do. */
static inline int gs_check_wait_loaded(void)
{
  for (int i = 0; i < 30000; i++) {
    if (gs_kernels_ready_for(NULL) == 1) return 1;
    usleep(1000);
  }
  fprintf(stderr, "the shim's kernels did not load within 30 s\n");
  return 0;
}

#endif
