/* Calls of the nine entry points with recognisable arguments, checked
 * against what the fake cuBLAS received (tests/fake/fake.h), shared by
 * test_forward and test_dlsym. The includer defines CHECK(cond) (exit
 * non-zero when false) and fills libs.sym: how the entry points are looked
 * up (through the shim's handle, or the fake's own under LD_PRELOAD). */
#ifndef GS_TEST_ENTRY_CALLS_H
#define GS_TEST_ENTRY_CALLS_H

#include <cublasLt.h>
#include <cublas_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../fake/fake.h"

typedef struct libs {
  void *shim, *blas, *lt;
  fake_last_fn blas_last, lt_last;
  fake_count_fn blas_count, lt_count;
  fake_set_status_fn blas_status, lt_status;
  /* the entry point NAME to call */
  void *(*sym)(const struct libs *L, const char *name);
} libs;

static void check_words(const fake_call *c, const char *name, const uint64_t *w, int n)
{
  if (strcmp(c->name, name) != 0) fprintf(stderr, "last call %s, expected %s\n", c->name, name);
  CHECK(!strcmp(c->name, name));
  CHECK(c->n == n);
  for (int i = 0; i < n; i++) {
    if (c->w[i] != w[i])
      fprintf(stderr, "%s: argument %d arrived as %#llx, sent %#llx\n", name, i,
              (unsigned long long)c->w[i], (unsigned long long)w[i]);
    CHECK(c->w[i] == w[i]);
  }
}

/* Call through the looked-up entry point, check every argument arrived and the status came
 * back, for two different programmed statuses. */
#define CALL_AND_CHECK(L, lastf, statusf, type, name, ...)                       \
  do {                                                                          \
    type fn = (type)(L)->sym(L, #name);                                         \
    const uint64_t expect[] = { FAKE_WORDS(__VA_ARGS__) };                      \
    int statuses[2] = { CUBLAS_STATUS_EXECUTION_FAILED, CUBLAS_STATUS_SUCCESS }; \
    for (int s = 0; s < 2; s++) {                                               \
      (L)->statusf(statuses[s]);                                                \
      CHECK((int)fn(__VA_ARGS__) == statuses[s]);                               \
      check_words((L)->lastf(), #name, expect, FAKE_COUNT(__VA_ARGS__));        \
    }                                                                           \
  } while (0)

typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const float *, const float *, int, const float *, int,
                                   const float *, float *, int);
typedef cublasStatus_t (*sgemm64_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                     int64_t, int64_t, int64_t, const float *, const float *,
                                     int64_t, const float *, int64_t, const float *, float *,
                                     int64_t);
typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                    int, int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*gemmex64_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                      int64_t, int64_t, int64_t, const void *, const void *,
                                      cudaDataType, int64_t, const void *, cudaDataType, int64_t,
                                      const void *, void *, cudaDataType, int64_t,
                                      cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*sgemmsb_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                     int, int, const float *, const float *, int, long long,
                                     const float *, int, long long, const float *, float *, int,
                                     long long, int);
typedef cublasStatus_t (*sgemmsb64_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                       int64_t, int64_t, int64_t, const float *, const float *,
                                       int64_t, long long, const float *, int64_t, long long,
                                       const float *, float *, int64_t, long long, int64_t);
typedef cublasStatus_t (*gemmsbex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                      int, int, const void *, const void *, cudaDataType, int,
                                      long long, const void *, cudaDataType, int, long long,
                                      const void *, void *, cudaDataType, int, long long, int,
                                      cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*gemmsbex64_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                        int64_t, int64_t, int64_t, const void *, const void *,
                                        cudaDataType, int64_t, long long, const void *,
                                        cudaDataType, int64_t, long long, const void *, void *,
                                        cudaDataType, int64_t, long long, int64_t,
                                        cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*ltmatmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                      const void *, cublasLtMatrixLayout_t, const void *,
                                      cublasLtMatrixLayout_t, const void *, const void *,
                                      cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                      const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);

static cublasHandle_t make_handle(const libs *L)
{
  cublasStatus_t (*create)(cublasHandle_t *) = (cublasStatus_t(*)(cublasHandle_t *))dlsym(L->blas, "cublasCreate_v2");
  CHECK(create);
  cublasHandle_t h;
  CHECK(create(&h) == CUBLAS_STATUS_SUCCESS);
  return h;
}

/* A cuBLASLt call's descriptor and layouts, made with the fake's own API. */
typedef struct lt_objs {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, c, d;
} lt_objs;

static lt_objs make_lt(const libs *L, cudaDataType t, int m, int n, int k, int ta, int tb)
{
  cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
  cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *, size_t);
  cublasStatus_t (*lay_create)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t, int64_t);
  *(void **)&desc_create = dlsym(L->lt, "cublasLtMatmulDescCreate");
  *(void **)&desc_set = dlsym(L->lt, "cublasLtMatmulDescSetAttribute");
  *(void **)&lay_create = dlsym(L->lt, "cublasLtMatrixLayoutCreate");
  CHECK(desc_create && desc_set && lay_create);
  lt_objs o;
  CHECK(!desc_create(&o.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CHECK(!desc_set(o.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CHECK(!desc_set(o.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  CHECK(!lay_create(&o.a, t, ta ? k : m, ta ? m : k, ta ? k : m));
  CHECK(!lay_create(&o.b, t, tb ? n : k, tb ? k : n, tb ? n : k));
  CHECK(!lay_create(&o.c, t, m, n, m));
  CHECK(!lay_create(&o.d, t, m, n, m));
  return o;
}

/* Distinct, recognisable pointer values: the fake never dereferences A/B/C. */
#define P(x) ((void *)(uintptr_t)(0x10000u * (x)))

static void every_entry_point(const libs *L)
{
  cublasHandle_t h = make_handle(L);
  float alpha = 1.5f, beta = 0.25f;
  CALL_AND_CHECK(L, blas_last, blas_status, sgemm_fn, cublasSgemm_v2, h, CUBLAS_OP_T, CUBLAS_OP_N,
                 11, 12, 13, &alpha, P(1), 14, P(2), 15, &beta, P(3), 16);
  CALL_AND_CHECK(L, blas_last, blas_status, sgemm64_fn, cublasSgemm_v2_64, h, CUBLAS_OP_N,
                 CUBLAS_OP_T, (int64_t)1 << 33, 21, 22, &alpha, P(4), (int64_t)1 << 34, P(5),
                 (int64_t)23, &beta, P(6), (int64_t)24);
  CALL_AND_CHECK(L, blas_last, blas_status, gemmex_fn, cublasGemmEx, h, CUBLAS_OP_T, CUBLAS_OP_T,
                 31, 32, 33, &alpha, P(7), CUDA_R_16BF, 34, P(8), CUDA_R_16BF, 35, &beta, P(9),
                 CUDA_R_32F, 36, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
  CALL_AND_CHECK(L, blas_last, blas_status, gemmex64_fn, cublasGemmEx_64, h, CUBLAS_OP_N,
                 CUBLAS_OP_N, (int64_t)41, (int64_t)42, (int64_t)43, &alpha, P(10), CUDA_R_16F,
                 (int64_t)44, P(11), CUDA_R_16F, (int64_t)45, &beta, P(12), CUDA_R_16F,
                 (int64_t)46, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
  CALL_AND_CHECK(L, blas_last, blas_status, sgemmsb_fn, cublasSgemmStridedBatched, h,
                 CUBLAS_OP_T, CUBLAS_OP_N, 51, 52, 53, &alpha, P(13), 54, 5501LL, P(14), 56,
                 5701LL, &beta, P(15), 58, 5901LL, 7);
  CALL_AND_CHECK(L, blas_last, blas_status, sgemmsb64_fn, cublasSgemmStridedBatched_64, h,
                 CUBLAS_OP_N, CUBLAS_OP_N, (int64_t)61, (int64_t)62, (int64_t)63, &alpha, P(16),
                 (int64_t)64, 6501LL, P(17), (int64_t)66, 6701LL, &beta, P(18), (int64_t)68,
                 6901LL, (int64_t)9);
  CALL_AND_CHECK(L, blas_last, blas_status, gemmsbex_fn, cublasGemmStridedBatchedEx, h,
                 CUBLAS_OP_N, CUBLAS_OP_T, 71, 72, 73, &alpha, P(19), CUDA_R_16BF, 74, 7501LL,
                 P(20), CUDA_R_16BF, 76, 7701LL, &beta, P(21), CUDA_R_16BF, 78, 7901LL, 3,
                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
  CALL_AND_CHECK(L, blas_last, blas_status, gemmsbex64_fn, cublasGemmStridedBatchedEx_64, h,
                 CUBLAS_OP_T, CUBLAS_OP_N, (int64_t)81, (int64_t)82, (int64_t)83, &alpha, P(22),
                 CUDA_R_32F, (int64_t)84, 8501LL, P(23), CUDA_R_32F, (int64_t)86, 8701LL, &beta,
                 P(24), CUDA_R_32F, (int64_t)88, 8901LL, (int64_t)4, CUBLAS_COMPUTE_32F_PEDANTIC,
                 CUBLAS_GEMM_DEFAULT);
  lt_objs o = make_lt(L, CUDA_R_32F, 128, 256, 64, 1, 0);
  CALL_AND_CHECK(L, lt_last, lt_status, ltmatmul_fn, cublasLtMatmul, (cublasLtHandle_t)P(25),
                 o.desc, &alpha, P(26), o.a, P(27), o.b, &beta, P(28), o.c, P(29), o.d,
                 (const cublasLtMatmulAlgo_t *)P(30), P(31), (size_t)4096, (cudaStream_t)P(32));
}

#endif
