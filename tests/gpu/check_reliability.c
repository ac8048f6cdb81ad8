/* GPU check: the reliability contracts of a routed call, through the shim's
 * entry points (linked with the shim's objects, like check_ab, so the check
 * and the shim share one CUDA runtime and the check can leave an error
 * pending in it).
 *   stale_error  an unread error of the runtime, left before a routed call
 *                with beta != 0, neither makes our kernel look failed nor
 *                makes cuBLAS run a second time into the updated C;
 *   host_wait    a kernel's first call, on a stream that waits for the host
 *                to set a flag after the call returns, returns without
 *                waiting (the first-use self-check never blocks);
 *   alpha_zero   with alpha == 0 and NaN in A, the caller gets what cuBLAS
 *                gives, case by case (printed): in host pointer mode the
 *                call is cuBLAS's (reason alpha_zero), in device pointer
 *                mode our kernel serves it with cuBLAS's NaN pattern;
 *   lt_attrs     a PyTorch-style cuBLASLt call is served (the attribute
 *                check passes the real library's descriptors), and calls
 *                with an attribute the shim does not handle, or a batch
 *                count on A unlike D's, forward with lt_attribute; what
 *                differs between two descriptors made alike is printed.
 * Exits 77 without a GPU. */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../dispatch/config.h"
#include "../../dispatch/route.h"
#include "../../dispatch/tally.h"
#include "gpu_check.h"

#define SIMT "sgemm_simt"
#define BF16 "gemm_bf16_wgmma_persistent"
#define F32TC "gemm_f32_3xtf32"
#define F32ACC "gemm_f32_bf16x6"
#define N 512

static int failures, checks;

static void verdict(const char *what, int ok)
{
  checks++;
  if (!ok) failures++;
  printf("%-4s %s\n", ok ? "ok" : "FAIL", what);
  fflush(stdout);
}


/* The real cuBLAS, past the shim's wrappers. */
static sgemm_fn real_sgemm;
static gemmex_fn real_gemmex;
static ltmatmul_fn real_lt;

static uint64_t served(const char *kernel) { return gs_tally_count(kernel, GS_R_ROUTED); }

static void set_env(const char *name, const char *value)
{
  if (value) setenv(name, value, 1); else unsetenv(name);
  gs_config_reload();
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static float frand(void)
{
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

static float *dev_random_f32(size_t n)
{
  float *h = malloc(n * 4), *d;
  for (size_t i = 0; i < n; i++) h[i] = frand();
  CU(cudaMalloc((void **)&d, n * 4));
  CU(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice));
  free(h);
  return d;
}

/* Round to nearest even; the inputs are finite. */
static uint16_t to_bf16(float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static void *dev_random_bf16(size_t n)
{
  uint16_t *h = malloc(n * 2);
  void *d;
  for (size_t i = 0; i < n; i++) h[i] = to_bf16(frand());
  CU(cudaMalloc(&d, n * 2));
  CU(cudaMemcpy(d, h, n * 2, cudaMemcpyHostToDevice));
  free(h);
  return d;
}

static double rel_diff_f32(const float *x_dev, const float *ref_dev, size_t n)
{
  float *x = malloc(n * 4), *r = malloc(n * 4);
  CU(cudaMemcpy(x, x_dev, n * 4, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(r, ref_dev, n * 4, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double d = (double)x[i] - r[i];
    num += d * d;
    den += (double)r[i] * r[i];
  }
  free(x); free(r);
  return isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
}

static cublasOperation_t op(int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

/* Calls (synchronizing after each) until the kernel serves one: a kernel's
 * first use is checked against cuBLAS before it serves. Returns whether it
 * did within 8 calls. */
static int serve_sgemm(cublasHandle_t h, const char *kernel, int ta, int tb, const float *A,
                       const float *B, float *C)
{
  float alpha = 1.0f, beta = 0.0f;
  uint64_t before = served(kernel);
  for (int i = 0; i < 8 && served(kernel) == before; i++) {
    CB(cublasSgemm_v2(h, op(ta), op(tb), N, N, N, &alpha, A, N, B, N, &beta, C, N));
    CU(cudaDeviceSynchronize());
  }
  return served(kernel) > before;
}

/* ---- stale_error ------------------------------------------------------ */

static void phase_stale_error(cublasHandle_t h, const float *A, const float *B, const float *C0,
                              float *C, float *R)
{
  set_env("GEMMSHIM_FP32", NULL);
  verdict("stale_error: " SIMT " serves TN once checked", serve_sgemm(h, SIMT, 1, 0, A, B, C));
  float alpha = 1.25f, beta = 0.5f;
  size_t bytes = (size_t)N * N * 4;
  CU(cudaMemcpy(R, C0, bytes, cudaMemcpyDeviceToDevice));
  CB(real_sgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, N, N, &alpha, A, N, B, N, &beta, R, N));
  CU(cudaMemcpy(C, C0, bytes, cudaMemcpyDeviceToDevice));
  CU(cudaDeviceSynchronize());
  uint64_t ours = served(SIMT), failed = gs_tally_count("cublas", GS_R_LAUNCH_FAILED);
  /* An error the program never reads, left pending in the runtime. */
  cudaError_t injected = cudaSetDevice(1 << 20);
  CB(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, N, N, N, &alpha, A, N, B, N, &beta, C, N));
  CU(cudaDeviceSynchronize());
  double d = rel_diff_f32(C, R, (size_t)N * N);
  printf("     injected %s; served %llu -> %llu, launch_failed %llu -> %llu, rel diff %.3g\n",
         cudaGetErrorName(injected), (unsigned long long)ours, (unsigned long long)served(SIMT),
         (unsigned long long)failed,
         (unsigned long long)gs_tally_count("cublas", GS_R_LAUNCH_FAILED), d);
  verdict("stale_error: the routed call is served by our kernel",
          served(SIMT) == ours + 1 && gs_tally_count("cublas", GS_R_LAUNCH_FAILED) == failed);
  verdict("stale_error: C is alpha*A*B + beta*C once (not twice)", d < 1e-5);
  verdict("stale_error: the kernel still serves the next call",
          serve_sgemm(h, SIMT, 1, 0, A, B, C));
}

/* ---- host_wait -------------------------------------------------------- */

typedef struct host_gate {
  atomic_int open;
  atomic_int timed_out;
} host_gate;

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Runs on the stream: holds it until the host opens the gate (at most 10 s,
 * so that a shim that waits inside the call makes this check fail rather
 * than hang). */
static void CUDART_CB wait_for_host(void *arg)
{
  host_gate *g = arg;
  double t0 = now_s();
  while (!atomic_load(&g->open))
    if (now_s() - t0 > 10.0) {
      atomic_store(&g->timed_out, 1);
      return;
    }
}

static void phase_host_wait(cublasHandle_t h, const float *A, const float *B, const float *C0,
                            float *C, float *R)
{
  set_env("GEMMSHIM_FP32", NULL);
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CB(cublasSetStream_v2(h, s));
  float alpha = 1.0f, beta = 0.75f;
  size_t bytes = (size_t)N * N * 4;
  CU(cudaMemcpy(R, C0, bytes, cudaMemcpyDeviceToDevice));
  CB(real_sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, A, N, B, N, &beta, R, N));
  CU(cudaMemcpy(C, C0, bytes, cudaMemcpyDeviceToDevice));
  CU(cudaDeviceSynchronize());
  /* GS_HOST_WAIT_WARM=1 (a probe): first make the TN class checked and
   * served, so the shim's resources and the compare kernel exist and only
   * the NN kernel itself is new */
  if (getenv("GS_HOST_WAIT_WARM")) {
    CB(cublasSetStream_v2(h, 0));
    serve_sgemm(h, SIMT, 1, 0, A, B, C);
    CB(cublasSetStream_v2(h, s));
    CU(cudaMemcpy(C, C0, bytes, cudaMemcpyDeviceToDevice));
    CU(cudaDeviceSynchronize());
  }
  static host_gate gate;
  atomic_store(&gate.open, 0);
  atomic_store(&gate.timed_out, 0);
  CU(cudaLaunchHostFunc(s, wait_for_host, &gate));
  double t0 = now_s();
  /* NN's first use: the kernel has not been checked in this layout */
  CB(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, A, N, B, N, &beta, C, N));
  double took = now_s() - t0;
  atomic_store(&gate.open, 1);
  CU(cudaStreamSynchronize(s));
  printf("     the first NN call returned after %.3f s (reasons so far: loading %llu, selfcheck %llu); "
         "the host gate %s\n",
         took, (unsigned long long)gs_tally_count("cublas", GS_R_LOADING),
         (unsigned long long)gs_tally_count("cublas", GS_R_SELFCHECK),
         atomic_load(&gate.timed_out) ? "timed out (the call waited for the stream)" : "opened in time");
  verdict("host_wait: a first call on a stream waiting for the host returns at once",
          took < 1.0 && !atomic_load(&gate.timed_out));
  verdict("host_wait: its result is right", rel_diff_f32(C, R, (size_t)N * N) < 1e-5);
  CB(cublasSetStream_v2(h, 0));
  if (!gs_check_wait_loaded()) failures++;
  verdict("host_wait: the kernel serves NN once its check has completed",
          serve_sgemm(h, SIMT, 0, 0, A, B, C));
  cudaStreamDestroy(s);
}

/* ---- alpha_zero ------------------------------------------------------- */

typedef struct nan_count { long nan, inf, differ_from_c; } nan_count;

/* NaN and Inf in an m x n result, and how many elements differ from C0
 * (bitwise; beta == 1 with alpha == 0 gives C0 under the reference-BLAS
 * rule). elem is 4 (f32) or 2 (bf16). */
static nan_count census(const void *d_dev, const void *c0_dev, size_t n, int elem)
{
  unsigned char *d = malloc(n * elem), *c = malloc(n * elem);
  CU(cudaMemcpy(d, d_dev, n * elem, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(c, c0_dev, n * elem, cudaMemcpyDeviceToHost));
  nan_count r = { 0, 0, 0 };
  for (size_t i = 0; i < n; i++) {
    float v;
    if (elem == 4) memcpy(&v, d + 4 * i, 4);
    else {
      uint32_t bits = (uint32_t)(d[2 * i] | d[2 * i + 1] << 8) << 16;
      memcpy(&v, &bits, 4);
    }
    r.nan += isnan(v);
    r.inf += isinf(v);
    r.differ_from_c += memcmp(d + elem * i, c + elem * i, elem) != 0;
  }
  free(d); free(c);
  return r;
}

static void poison_first(void *dev, int elem)
{
  if (elem == 4) {
    float nan = NAN;
    CU(cudaMemcpy(dev, &nan, 4, cudaMemcpyHostToDevice));
  } else {
    uint16_t nan = 0x7fc0;
    CU(cudaMemcpy(dev, &nan, 2, cudaMemcpyHostToDevice));
  }
}

typedef enum { ENTRY_SGEMM, ENTRY_GEMMEX_BF16 } entry_t;

/* One alpha == 0 case through the real cuBLAS and through the shim (our
 * kernel, forced), on the same inputs. */
static void alpha_zero_case(cublasHandle_t h, entry_t entry, const char *kernel, int ta, int tb,
                            int m, int n, int k, int device_scalars, float beta)
{
  int elem = entry == ENTRY_SGEMM ? 4 : 2;
  size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
  void *A = elem == 4 ? (void *)dev_random_f32(na) : dev_random_bf16(na);
  void *B = elem == 4 ? (void *)dev_random_f32(nb) : dev_random_bf16(nb);
  void *C0 = elem == 4 ? (void *)dev_random_f32(nc) : dev_random_bf16(nc);
  void *C;
  CU(cudaMalloc(&C, nc * elem));
  poison_first(A, elem);
  float hs[2] = { 0.0f, beta };
  float *ds;
  CU(cudaMalloc((void **)&ds, 8));
  CU(cudaMemcpy(ds, hs, 8, cudaMemcpyHostToDevice));
  const float *pa = device_scalars ? ds : &hs[0], *pb = device_scalars ? ds + 1 : &hs[1];
  CB(cublasSetPointerMode_v2(h, device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
  int lda = ta ? k : m, ldb = tb ? n : k;
  nan_count res[2];
  uint64_t before = served(kernel), after = before;
  uint64_t to_cublas = gs_tally_count("cublas", GS_R_ALPHA_ZERO);
  for (int path = 0; path < 2; path++) {   /* 0: cuBLAS, 1: through the shim */
    if (beta == 0.0f) CU(cudaMemset(C, 0xff, nc * elem));   /* NaN: must not be read */
    else CU(cudaMemcpy(C, C0, nc * elem, cudaMemcpyDeviceToDevice));
    if (path == 1) {
      /* the first call of a class may be the self-check: go until served
       * (host pointer mode: one call, which cuBLAS must get) */
      for (int i = 0; i < (device_scalars ? 8 : 1) && served(kernel) == before; i++) {
        if (beta == 0.0f) CU(cudaMemset(C, 0xff, nc * elem));
        else CU(cudaMemcpy(C, C0, nc * elem, cudaMemcpyDeviceToDevice));
        if (entry == ENTRY_SGEMM)
          CB(cublasSgemm_v2(h, op(ta), op(tb), m, n, k, pa, A, lda, B, ldb, pb, C, m));
        else
          CB(cublasGemmEx(h, op(ta), op(tb), m, n, k, pa, A, CUDA_R_16BF, lda, B, CUDA_R_16BF,
                          ldb, pb, C, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        CU(cudaDeviceSynchronize());
      }
      after = served(kernel);
    } else if (entry == ENTRY_SGEMM) {
      CB(real_sgemm(h, op(ta), op(tb), m, n, k, pa, A, lda, B, ldb, pb, C, m));
    } else {
      CB(real_gemmex(h, op(ta), op(tb), m, n, k, pa, A, CUDA_R_16BF, lda, B, CUDA_R_16BF, ldb, pb,
                     C, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
    CU(cudaDeviceSynchronize());
    res[path] = census(C, C0, nc, elem);
  }
  CB(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST));
  char what[256];
  snprintf(what, sizeof what,
           "alpha_zero: %s %s%s %dx%dx%d %s beta=%g: cuBLAS nan=%ld differ_from_C=%ld, "
           "ours nan=%ld differ_from_C=%ld",
           entry == ENTRY_SGEMM ? "Sgemm" : "GemmEx-bf16", ta ? "T" : "N", tb ? "T" : "N", m, n, k,
           device_scalars ? "device" : "host", beta, res[0].nan, res[0].differ_from_c, res[1].nan,
           res[1].differ_from_c);
  int same = res[0].nan == res[1].nan && res[0].inf == res[1].inf &&
             (beta == 0.0f || res[0].differ_from_c == res[1].differ_from_c ||
              (res[0].nan == 0 && res[1].nan == 0));
  int went_right = device_scalars
                       ? after > before
                       : after == before && gs_tally_count("cublas", GS_R_ALPHA_ZERO) == to_cublas + 1;
  printf("     %s\n", device_scalars ? "device scalars: must be served by our kernel"
                                      : "host scalars: must go to cuBLAS (alpha_zero)");
  verdict(what, went_right && same);
  cudaFree(A); cudaFree(B); cudaFree(C0); cudaFree(C); cudaFree(ds);
}

static void phase_alpha_zero(cublasHandle_t h)
{
  set_env("GEMMSHIM_FP32", NULL);
  alpha_zero_case(h, ENTRY_SGEMM, SIMT, 1, 0, 512, 512, 512, 0, 1.0f);
  alpha_zero_case(h, ENTRY_SGEMM, SIMT, 0, 0, 512, 512, 512, 0, 1.0f);
  alpha_zero_case(h, ENTRY_SGEMM, SIMT, 1, 0, 2048, 2048, 2048, 0, 1.0f);
  alpha_zero_case(h, ENTRY_SGEMM, SIMT, 1, 0, 512, 512, 512, 1, 1.0f);
  alpha_zero_case(h, ENTRY_SGEMM, SIMT, 1, 0, 512, 512, 512, 0, 0.0f);
  alpha_zero_case(h, ENTRY_SGEMM, SIMT, 1, 0, 512, 512, 512, 1, 0.0f);
  alpha_zero_case(h, ENTRY_GEMMEX_BF16, BF16, 1, 0, 512, 512, 512, 0, 1.0f);
  alpha_zero_case(h, ENTRY_GEMMEX_BF16, BF16, 0, 0, 512, 512, 512, 0, 1.0f);
  alpha_zero_case(h, ENTRY_GEMMEX_BF16, BF16, 1, 0, 4096, 4096, 4096, 0, 1.0f);
  alpha_zero_case(h, ENTRY_GEMMEX_BF16, BF16, 1, 0, 512, 512, 512, 1, 1.0f);
  alpha_zero_case(h, ENTRY_GEMMEX_BF16, BF16, 1, 0, 512, 512, 512, 0, 0.0f);
  set_env("GEMMSHIM_FP32", "tc-fast");
  alpha_zero_case(h, ENTRY_SGEMM, F32TC, 1, 0, 512, 512, 512, 0, 1.0f);
  alpha_zero_case(h, ENTRY_SGEMM, F32TC, 0, 1, 512, 512, 512, 0, 1.0f);
  alpha_zero_case(h, ENTRY_SGEMM, F32TC, 1, 0, 512, 512, 512, 1, 1.0f);
  set_env("GEMMSHIM_FP32", "tc");
  alpha_zero_case(h, ENTRY_SGEMM, F32ACC, 1, 0, 512, 512, 512, 0, 1.0f);
  alpha_zero_case(h, ENTRY_SGEMM, F32ACC, 0, 1, 512, 512, 512, 0, 1.0f);
  alpha_zero_case(h, ENTRY_SGEMM, F32ACC, 1, 0, 512, 512, 512, 1, 1.0f);
  set_env("GEMMSHIM_FP32", NULL);
}

/* ---- lt_bytes --------------------------------------------------------- */

static cublasLtMatmulDesc_t pytorch_desc(int32_t ta, uint32_t epi, const void *bias)
{
  cublasLtMatmulDesc_t d;
  CB(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  int32_t tb = CUBLAS_OP_N;
  CB(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CB(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  CB(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  if (bias) CB(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  return d;
}

/* The 8-byte words in which two descriptors differ (printed). */
static void print_differing_words(const char *what, const void *a, const void *b)
{
  const uint64_t *x = a, *y = b;
  printf("     %s: words that differ:", what);
  for (size_t i = 0; i < sizeof(cublasLtMatmulDescOpaque_t) / 8; i++)
    if (x[i] != y[i]) printf(" %zu (%llx vs %llx)", i, (unsigned long long)x[i], (unsigned long long)y[i]);
  printf("\n");
}

static uint64_t lt_forwards(void) { return gs_tally_count("cublas", GS_R_LT_ATTRIBUTE); }

static void phase_lt_attrs(void)
{
  set_env("GEMMSHIM_FP32", NULL);
  void *bias_ptr = (void *)(uintptr_t)0x7f0000001000ull;
  cublasLtMatmulDesc_t d1 = pytorch_desc(CUBLAS_OP_T, CUBLASLT_EPILOGUE_BIAS, bias_ptr);
  cublasLtMatmulDesc_t d2 = pytorch_desc(CUBLAS_OP_T, CUBLASLT_EPILOGUE_BIAS, bias_ptr);
  print_differing_words("two descriptors made alike", d1, d2);
  cublasLtMatmulDescDestroy(d1);
  cublasLtMatmulDescDestroy(d2);

  cublasLtHandle_t lt;
  CB(cublasLtCreate(&lt));
  void *A = dev_random_bf16(512 * 512), *B = dev_random_bf16(512 * 512),
       *C = dev_random_bf16(512 * 512), *bias = dev_random_bf16(512);
  cublasLtMatrixLayout_t la, lb, lc;
  CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, 512, 512, 512));
  CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, 512, 512, 512));
  CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, 512, 512, 512));
  float alpha = 1.0f, beta = 0.0f;

  /* a PyTorch-style call: bf16 TN with a bias, a fresh descriptor each
   * time, served by our kernel once checked */
  uint64_t before = served(BF16), fwd = lt_forwards();
  for (int i = 0; i < 8 && served(BF16) == before; i++) {
    cublasLtMatmulDesc_t d = pytorch_desc(CUBLAS_OP_T, CUBLASLT_EPILOGUE_BIAS, bias);
    CB(cublasLtMatmul(lt, d, &alpha, A, la, B, lb, &beta, C, lc, C, lc, NULL, NULL, 0, 0));
    CU(cudaDeviceSynchronize());
    cublasLtMatmulDescDestroy(d);
  }
  verdict("lt_attrs: a PyTorch-style cuBLASLt bf16 TN bias call is served",
          served(BF16) > before && lt_forwards() == fwd);

  /* attributes the shim does not handle, set to values cuBLAS can take
   * (pointers to real device memory): each call forwards */
  float *one_dev;
  CU(cudaMalloc((void **)&one_dev, sizeof(float)));
  CU(cudaMemcpy(one_dev, &alpha, sizeof(float), cudaMemcpyHostToDevice));
  const int32_t lower = CUBLAS_FILL_MODE_LOWER;
  const int64_t stride = 1;
  const struct { cublasLtMatmulDescAttributes_t attr; const void *v; size_t size; const char *name; } unhandled[] = {
    { CUBLASLT_MATMUL_DESC_FILL_MODE, &lower, sizeof lower, "FILL_MODE" },
    { CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, &one_dev, sizeof one_dev, "D_OUT_SCALE_POINTER" },
    { CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &one_dev, sizeof one_dev, "A_SCALE_POINTER" },
    { CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, &stride, sizeof stride, "ALPHA_VECTOR_BATCH_STRIDE" },
  };
  for (size_t i = 0; i < sizeof unhandled / sizeof *unhandled; i++) {
    cublasLtMatmulDesc_t d = pytorch_desc(CUBLAS_OP_T, CUBLASLT_EPILOGUE_BIAS, bias);
    cublasStatus_t set = cublasLtMatmulDescSetAttribute(d, unhandled[i].attr, unhandled[i].v,
                                                        unhandled[i].size);
    char what[160];
    if (set != CUBLAS_STATUS_SUCCESS) {
      printf("     lt_attrs: %s cannot be set here (status %d): nothing to check\n",
             unhandled[i].name, (int)set);
      cublasLtMatmulDescDestroy(d);
      continue;
    }
    uint64_t f0 = lt_forwards(), s0 = served(BF16);
    /* cuBLAS may refuse such a call: its status is the caller's */
    cublasStatus_t st =
        cublasLtMatmul(lt, d, &alpha, A, la, B, lb, &beta, C, lc, C, lc, NULL, NULL, 0, 0);
    CU(cudaDeviceSynchronize());
    snprintf(what, sizeof what, "lt_attrs: %s set: forwarded with lt_attribute (cuBLAS status %d)",
             unhandled[i].name, (int)st);
    verdict(what, lt_forwards() == f0 + 1 && served(BF16) == s0);
    cublasLtMatmulDescDestroy(d);
  }
  cudaFree(one_dev);
  /* a batch count on A unlike D's */
  {
    cublasLtMatmulDesc_t d = pytorch_desc(CUBLAS_OP_T, CUBLASLT_EPILOGUE_BIAS, bias);
    cublasLtMatrixLayout_t la2;
    CB(cublasLtMatrixLayoutCreate(&la2, CUDA_R_16BF, 512, 512, 512));
    int32_t two = 2;
    CB(cublasLtMatrixLayoutSetAttribute(la2, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &two, sizeof two));
    uint64_t f0 = lt_forwards();
    (void)cublasLtMatmul(lt, d, &alpha, A, la2, B, lb, &beta, C, lc, C, lc, NULL, NULL, 0, 0);
    CU(cudaDeviceSynchronize());
    verdict("lt_attrs: a batch count of 2 on A with D's of 1 forwards", lt_forwards() == f0 + 1);
    cublasLtMatrixLayoutDestroy(la2);
    cublasLtMatmulDescDestroy(d);
  }
  cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc);
  cublasLtDestroy(lt);
  cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(bias);
}

static const char *const phases[] = { "stale_error", "host_wait", "alpha_zero", "lt_attrs" };

/* Each phase in a process of its own (this program again, with
 * GS_CHECK_ONLY naming the phase), started before this process touches
 * CUDA: a kernel one phase disables must not hide what the next one tests.
 * Returns the worst exit status; 77 only when every phase skipped. */
static int run_phases(const char *self)
{
  int worst = 77;
  for (size_t i = 0; i < sizeof phases / sizeof *phases; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      setenv("GS_CHECK_ONLY", phases[i], 1);
      execl(self, self, (char *)NULL);
      _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return 1;
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (rc != 0 && rc != 77) worst = rc;
    else if (rc == 0 && worst == 77) worst = 0;
    if (rc != 0 && rc != 77) printf("check_reliability: phase %s exited %d\n", phases[i], rc);
  }
  return worst;
}

int main(void)
{
  const char *only = getenv("GS_CHECK_ONLY");
  if (!only) return run_phases("/proc/self/exe");
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("check_reliability: no CUDA GPU available\n");
    return 77;
  }
  setenv("GEMMSHIM_FORCE", "1", 1);
  gs_config_reload();
  *(void **)&real_sgemm = dlsym(RTLD_NEXT, "cublasSgemm_v2");
  *(void **)&real_gemmex = dlsym(RTLD_NEXT, "cublasGemmEx");
  *(void **)&real_lt = dlsym(RTLD_NEXT, "cublasLtMatmul");
  if (!real_sgemm || !real_gemmex || !real_lt) {
    fprintf(stderr, "check_reliability: the real cuBLAS is not reachable through RTLD_NEXT\n");
    return 1;
  }
  size_t nn = (size_t)N * N;
  float *A = dev_random_f32(nn), *B = dev_random_f32(nn), *C0 = dev_random_f32(nn), *C, *R;
  CU(cudaMalloc((void **)&C, nn * 4));
  CU(cudaMalloc((void **)&R, nn * 4));
  cublasHandle_t h;
  CB(cublasCreate_v2(&h));
  /* host_wait makes its first routed call on a held stream with nothing
   * loaded yet, as a program's first call may be */
  if (strcmp(only, "host_wait") != 0 && !gs_check_wait_loaded()) return 1;
  if (!strcmp(only, "stale_error")) phase_stale_error(h, A, B, C0, C, R);
  if (!strcmp(only, "host_wait")) phase_host_wait(h, A, B, C0, C, R);
  if (!strcmp(only, "alpha_zero")) phase_alpha_zero(h);
  if (!strcmp(only, "lt_attrs")) phase_lt_attrs();
  cublasDestroy_v2(h);
  cudaFree(A); cudaFree(B); cudaFree(C0); cudaFree(C); cudaFree(R);
  printf("check_reliability %s: %d passed, %d failed\n", only, checks - failures, failures);
  return failures ? 1 : 0;
}
