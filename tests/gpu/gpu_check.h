/* What the GPU checks share: status checks that name the file and line.
 * A failed CUDA or cuBLAS call ends the check (these are test programs). */
#ifndef GS_GPU_CHECK_H
#define GS_GPU_CHECK_H

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif
