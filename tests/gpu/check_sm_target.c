/* GPU check: a caller's SM-count target (cublasSetSmCountTarget, cuBLASLt's
 * CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET), the way distributed training
 * leaves SMs to communication.
 *
 * The persistent BF16 kernel can honour a target (at most that many CTAs,
 * one per SM). Forced (GEMMSHIM_FORCE=1, as here), such calls are served
 * by it with the same bits as without a target (every output tile is
 * computed the same way whichever CTA takes it) and within BF16 rounding
 * of cuBLAS under the same target. Unforced they stay with cuBLAS (its
 * wins were measured without a target), even on a shape it wins. Kernels
 * with a grid per tile cannot honour a target: forwarded even when forced.
 * Forwarded calls carry the reason sm_count_target and are bitwise cuBLAS.
 *
 * Linked with the shim's own objects (see check_sgemm.c). Exits 77 without
 * a GPU, or on a GPU other than sm_90 (the kernel is sm_90a). */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../dispatch/config.h"
#include "../../dispatch/route.h"
#include "../../dispatch/tally.h"
#include "gpu_check.h"

#define KERNEL "gemm_bf16_wgmma_persistent"

static int failures, checks;

static cublasStatus_t (*real_gemmex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                     int, int, const void *, const void *, cudaDataType, int,
                                     const void *, cudaDataType, int, const void *, void *,
                                     cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
static cublasStatus_t (*real_sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const float *, const float *, int, const float *, int,
                                    const float *, float *, int);

static void verdict(const char *what, int ok, double value)
{
  checks++;
  if (!ok) failures++;
  printf("%-4s %-66s %.3e\n", ok ? "ok" : "FAIL", what, value);
}

static uint64_t served(void) { return gs_tally_count(KERNEL, GS_R_ROUTED); }
static uint64_t forwarded_for_target(void) { return gs_tally_count("cublas", GS_R_SM_COUNT); }

static uint64_t rng = 0x2545f4914f6cdd1dull;
static float frand(void)
{
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

/* FP32 -> BF16, round to nearest even (finite inputs). */
static uint16_t to_bf16(float x)
{
  uint32_t u;
  memcpy(&u, &x, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float from_bf16(uint16_t b)
{
  uint32_t u = (uint32_t)b << 16;
  float x;
  memcpy(&x, &u, 4);
  return x;
}

static void *dev_random_bf16(size_t n)
{
  uint16_t *h = malloc(n * 2);
  for (size_t i = 0; i < n; i++) h[i] = to_bf16(frand());
  void *d;
  CU(cudaMalloc(&d, n * 2));
  CU(cudaMemcpy(d, h, n * 2, cudaMemcpyHostToDevice));
  free(h);
  return d;
}

static uint16_t *host_copy(const void *d, size_t n)
{
  uint16_t *h = malloc(n * 2);
  CU(cudaMemcpy(h, d, n * 2, cudaMemcpyDeviceToHost));
  return h;
}

/* Relative Frobenius difference of two BF16 m x n results. */
static double rel_diff(const uint16_t *x, const uint16_t *ref, size_t n)
{
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double r = from_bf16(ref[i]), d = (double)from_bf16(x[i]) - r;
    num += d * d;
    den += r * r;
  }
  return isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
}


/* D = A B in layout (ta, tb), BF16 in and out, FP32 compute, D poisoned
 * first (beta = 0 must not read it); returns D on the host. */
static uint16_t *gemm_bf16(gemmex_fn fn, cublasHandle_t h, int ta, int tb, int m, int n, int k,
                           const void *A, const void *B, void *D)
{
  const float alpha = 1.0f, beta = 0.0f;
  CU(cudaMemset(D, 0xff, (size_t)m * n * 2));
  CB(fn(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, A,
        CUDA_R_16BF, ta ? k : m, B, CUDA_R_16BF, tb ? n : k, &beta, D, CUDA_R_16BF, m,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  CU(cudaDeviceSynchronize());
  return host_copy(D, (size_t)m * n);
}

/* Layout (ta, tb): 2048 x 2048 x 512 is 128 tiles of 128 x 256, more than
 * a target of 66 CTAs and 16 times a target of 8. */
static void bf16_layout(cublasHandle_t h, int ta, int tb, const char *name)
{
  const int m = 2048, n = 2048, k = 512;
  void *A = dev_random_bf16((size_t)m * k), *B = dev_random_bf16((size_t)k * n), *D;
  CU(cudaMalloc(&D, (size_t)m * n * 2));
  char what[128];

  CB(cublasSetSmCountTarget(h, 0));
  free(gemm_bf16(cublasGemmEx, h, ta, tb, m, n, k, A, B, D)); /* first use: the self-check */
  uint64_t before = served();
  uint16_t *plain = gemm_bf16(cublasGemmEx, h, ta, tb, m, n, k, A, B, D);
  snprintf(what, sizeof what, "%s no target: served by " KERNEL, name);
  verdict(what, served() == before + 1, 0);

  static const int targets[] = { 66, 8 };
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
    CB(cublasSetSmCountTarget(h, targets[i]));
    before = served();
    uint64_t fwd = forwarded_for_target();
    uint16_t *ours = gemm_bf16(cublasGemmEx, h, ta, tb, m, n, k, A, B, D);
    snprintf(what, sizeof what, "%s target %d: served, bits as without a target", name, targets[i]);
    verdict(what,
            served() == before + 1 && forwarded_for_target() == fwd &&
                memcmp(ours, plain, (size_t)m * n * 2) == 0,
            0);
    uint16_t *theirs = gemm_bf16(real_gemmex, h, ta, tb, m, n, k, A, B, D);
    double e = rel_diff(ours, theirs, (size_t)m * n);
    snprintf(what, sizeof what, "%s target %d: against cuBLAS (same target)", name, targets[i]);
    verdict(what, e <= 1e-2, e);
    free(ours);
    free(theirs);
  }
  CB(cublasSetSmCountTarget(h, 0));
  free(plain);
  cudaFree(A); cudaFree(B); cudaFree(D);
}

/* cuBLASLt, TN (nn.Linear's forward), the target on the matmul descriptor. */
static void bf16_lt(void)
{
  const int m = 2048, n = 2048, k = 512;
  void *A = dev_random_bf16((size_t)k * m), *B = dev_random_bf16((size_t)k * n), *D;
  CU(cudaMalloc(&D, (size_t)m * n * 2));
  cublasLtHandle_t lt;
  CB(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, ld;
  CB(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t op_t = CUBLAS_OP_T;
  CB(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t));
  CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, m, k));
  CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, k));
  CB(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, m));
  const float alpha = 1.0f, beta = 0.0f;
  /* a first call without a target (served, or the self-check if this is
   * the layout's first use), a second as the reference, then the target */
  uint16_t *res[3];
  for (int i = 0; i < 3; i++) {
    const int32_t target = i == 2 ? 66 : 0;
    CB(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &target,
                                      sizeof target));
    uint64_t before = served(), fwd = forwarded_for_target();
    CU(cudaMemset(D, 0xff, (size_t)m * n * 2));
    CB(cublasLtMatmul(lt, desc, &alpha, A, la, B, lb, &beta, D, ld, D, ld, NULL, NULL, 0, 0));
    CU(cudaDeviceSynchronize());
    res[i] = host_copy(D, (size_t)m * n);
    if (i == 1) verdict("cublasLtMatmul bf16 TN no target: served", served() == before + 1, 0);
    if (i == 2)
      verdict("cublasLtMatmul bf16 TN, SM_COUNT_TARGET 66: served, bits as without",
              served() == before + 1 && forwarded_for_target() == fwd &&
                  memcmp(res[1], res[2], (size_t)m * n * 2) == 0,
              0);
  }
  free(res[0]); free(res[1]); free(res[2]);
  cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  cudaFree(A); cudaFree(B); cudaFree(D);
}

/* The SIMT SGEMM has a grid per tile: a call with a target is forwarded,
 * and what comes back is cuBLAS's own result. */
static void strict_fp32_forwards(cublasHandle_t h)
{
  const int s = 1024;
  const size_t n = (size_t)s * s;
  float *hx = malloc(n * 4), *A, *B, *C, *r0 = malloc(n * 4), *r1 = malloc(n * 4);
  CU(cudaMalloc((void **)&A, n * 4)); CU(cudaMalloc((void **)&B, n * 4));
  CU(cudaMalloc((void **)&C, n * 4));
  for (size_t i = 0; i < n; i++) hx[i] = frand();
  CU(cudaMemcpy(A, hx, n * 4, cudaMemcpyHostToDevice));
  for (size_t i = 0; i < n; i++) hx[i] = frand();
  CU(cudaMemcpy(B, hx, n * 4, cudaMemcpyHostToDevice));
  const float alpha = 1.0f, beta = 0.0f;
  CB(cublasSetSmCountTarget(h, 66));
  uint64_t fwd = forwarded_for_target();
  CB(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &alpha, A, s, B, s, &beta, C, s));
  CU(cudaMemcpy(r0, C, n * 4, cudaMemcpyDeviceToHost));
  CB(real_sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &alpha, A, s, B, s, &beta, C, s));
  CU(cudaMemcpy(r1, C, n * 4, cudaMemcpyDeviceToHost));
  verdict("cublasSgemm NN 1024^3, target 66: forwarded (sm_count_target), cuBLAS bits",
          forwarded_for_target() == fwd + 1 && memcmp(r0, r1, n * 4) == 0, 0);
  CB(cublasSetSmCountTarget(h, 0));
  free(hx); free(r0); free(r1);
  cudaFree(A); cudaFree(B); cudaFree(C);
}

/* Unforced: NT 8192 x 8192 x 4096 is a measured win (a weight gradient of
 * Llama-3-70B), served without a target and forwarded with one. */
static void unforced_win_with_target(cublasHandle_t h)
{
  unsetenv("GEMMSHIM_FORCE");
  gs_config_reload();
  const int m = 8192, n = 8192, k = 4096;
  void *A = dev_random_bf16((size_t)m * k), *B = dev_random_bf16((size_t)n * k), *D;
  CU(cudaMalloc(&D, (size_t)m * n * 2));
  uint64_t before = served();
  free(gemm_bf16(cublasGemmEx, h, 0, 1, m, n, k, A, B, D));
  verdict("unforced NT 8192x8192x4096 (a win), no target: served", served() == before + 1, 0);
  CB(cublasSetSmCountTarget(h, 120));
  before = served();
  uint64_t fwd = forwarded_for_target();
  uint16_t *shim = gemm_bf16(cublasGemmEx, h, 0, 1, m, n, k, A, B, D);
  uint16_t *theirs = gemm_bf16(real_gemmex, h, 0, 1, m, n, k, A, B, D);
  verdict("unforced, target 120: forwarded (sm_count_target), cuBLAS bits",
          served() == before && forwarded_for_target() == fwd + 1 &&
              memcmp(shim, theirs, (size_t)m * n * 2) == 0,
          0);
  CB(cublasSetSmCountTarget(h, 0));
  free(shim); free(theirs);
  cudaFree(A); cudaFree(B); cudaFree(D);
  setenv("GEMMSHIM_FORCE", "1", 1);
  gs_config_reload();
}

int main(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("check_sm_target: no CUDA GPU available\n");
    return 77;
  }
  int major = 0, minor = 0;
  CU(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CU(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  if (major != 9 || minor != 0) {
    printf("check_sm_target: the BF16 kernel is built for sm_90a; this GPU is sm_%d%d\n", major,
           minor);
    return 77;
  }
  setenv("GEMMSHIM_FORCE", "1", 1);
  *(void **)&real_gemmex = dlsym(RTLD_NEXT, "cublasGemmEx");
  *(void **)&real_sgemm = dlsym(RTLD_NEXT, "cublasSgemm_v2");
  if (!real_gemmex || !real_sgemm) {
    fprintf(stderr, "check_sm_target: the real cuBLAS is not reachable\n");
    return 1;
  }
  cublasHandle_t h;
  CB(cublasCreate_v2(&h));
  if (!gs_check_wait_loaded()) return 1;
  bf16_layout(h, 1, 0, "GemmEx bf16 TN");
  bf16_layout(h, 0, 0, "GemmEx bf16 NN");
  bf16_layout(h, 0, 1, "GemmEx bf16 NT");
  bf16_lt();
  strict_fp32_forwards(h);
  unforced_win_with_target(h);
  cublasDestroy_v2(h);
  printf("check_sm_target: %d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
