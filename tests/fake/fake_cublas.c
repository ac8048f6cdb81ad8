/* A fake libcublas: the GEMM entry points record their arguments; the
 * handle functions the shim reads are real enough to test it. */
#include <cublasLt.h>
#include <cublas_api.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake_common.h"

struct cublasContext {
  cudaStream_t stream;
  cublasPointerMode_t pointer_mode;
  cublasMath_t math;
  int sm_count_target;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
  *handle = calloc(1, sizeof **handle);
  return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) { free(h); return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) { h->stream = s; return 0; }
cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t *s) { *s = h->stream; return 0; }
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t m) { h->pointer_mode = m; return 0; }
cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t *m) { *m = h->pointer_mode; return 0; }
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) { h->math = m; return 0; }
cublasStatus_t cublasGetMathMode(cublasHandle_t h, cublasMath_t *m) { *m = h->math; return 0; }
cublasStatus_t cublasSetSmCountTarget(cublasHandle_t h, int n) { h->sm_count_target = n; return 0; }
cublasStatus_t cublasGetSmCountTarget(cublasHandle_t h, int *n) { *n = h->sm_count_target; return 0; }
cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
  *value = type == MAJOR_VERSION ? 13 : type == MINOR_VERSION ? 99 : 0;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const float *alpha,
                              const float *A, int lda, const float *B, int ldb, const float *beta,
                              float *C, int ldc)
{
  return FAKE_RECORD("cublasSgemm_v2", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                     beta, C, ldc);
}

cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                 cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                 const float *alpha, const float *A, int64_t lda, const float *B,
                                 int64_t ldb, const float *beta, float *C, int64_t ldc)
{
  return FAKE_RECORD("cublasSgemm_v2_64", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                     beta, C, ldc);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo)
{
  if ((int)algo == FAKE_ALGO_SLOW) usleep(300000);
  if ((int)algo == FAKE_ALGO_NESTED_LT) {
    /* Like libcublas: an internal call through the PLT to cublasLtMatmul. */
    cublasStatus_t st = cublasLtMatmul(NULL, NULL, alpha, A, NULL, B, NULL, beta, C, NULL, C,
                                       NULL, NULL, NULL, 0, NULL);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
  }
  return FAKE_RECORD("cublasGemmEx", handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                     Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                               const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
                               const void *B, cudaDataType Btype, int64_t ldb, const void *beta,
                               void *C, cudaDataType Ctype, int64_t ldc,
                               cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
  return FAKE_RECORD("cublasGemmEx_64", handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                     Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda,
                                         long long int strideA, const float *B, int ldb,
                                         long long int strideB, const float *beta, float *C,
                                         int ldc, long long int strideC, int batchCount)
{
  return FAKE_RECORD("cublasSgemmStridedBatched", handle, transa, transb, m, n, k, alpha, A, lda,
                     strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

cublasStatus_t cublasSgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int64_t m, int64_t n,
                                            int64_t k, const float *alpha, const float *A,
                                            int64_t lda, long long int strideA, const float *B,
                                            int64_t ldb, long long int strideB, const float *beta,
                                            float *C, int64_t ldc, long long int strideC,
                                            int64_t batchCount)
{
  return FAKE_RECORD("cublasSgemmStridedBatched_64", handle, transa, transb, m, n, k, alpha, A,
                     lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long int strideA, const void *B,
                                          cudaDataType Btype, int ldb, long long int strideB,
                                          const void *beta, void *C, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
  return FAKE_RECORD("cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k, alpha, A,
                     Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC,
                     batchCount, computeType, algo);
}

cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
    long long int strideA, const void *B, cudaDataType Btype, int64_t ldb, long long int strideB,
    const void *beta, void *C, cudaDataType Ctype, int64_t ldc, long long int strideC,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
  return FAKE_RECORD("cublasGemmStridedBatchedEx_64", handle, transa, transb, m, n, k, alpha, A,
                     Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC,
                     batchCount, computeType, algo);
}
