/* GPU check: the first-use self-check and A/B mode, through the shim's
 * cuBLAS entry points (linked with the shim's objects, like check_sgemm).
 * Phases run in one process, changing the environment between them:
 *   0. captured before its self-check, a kernel's call goes to cuBLAS;
 *   1. self-check: a kernel's first call per layout is cuBLAS's (the
 *      caller gets cuBLAS's exact bits) while ours is compared beside it
 *      without waiting; once that comparison is done, calls are ours;
 *   2. A/B shadow: cuBLAS's exact bits, a CSV row per call;
 *   3. A/B use: our result, a CSV row per call;
 *   4. a graph captured on one thread while another makes A/B calls: the
 *      capture works, replays correctly, and no row comes from it;
 *   5. a deliberately broken kernel (GEMMSHIM_TEST_BREAK) fails its
 *      self-check, is disabled, and its calls go to cuBLAS;
 *   6. a decode kernel (BF16, launched with programmatic dependent launch
 *      where the driver allows it, each A/B pair behind the hold): few
 *      columns and few rows (its output transposed), in shadow mode
 *      cuBLAS's exact bits, in use mode exactly the bits the kernel gives
 *      outside A/B, a row naming it per compared call.
 * The self-check writes no A/B row: it is not timed. Exits 77 without a
 * GPU. */
#define _GNU_SOURCE
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../dispatch/config.h"
#include "../../dispatch/route.h"
#include "gpu_check.h"
#include "../../dispatch/tally.h"

#define KERNEL "sgemm_simt"
#define N 512

static int failures, checks;


static void verdict(const char *what, int ok)
{
  checks++;
  if (!ok) failures++;
  printf("%-4s %s\n", ok ? "ok" : "FAIL", what);
}

static cublasStatus_t (*real_sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const float *, const float *, int, const float *, int,
                                    const float *, float *, int);

static float *A, *B, *C0, *C, *R;   /* device: inputs, start C, output, reference */
static char ab_path[256];

static void fill(float *d, size_t n, uint64_t seed)
{
  float *h = malloc(n * 4);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    h[i] = (float)((double)(seed >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
  CU(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice));
  free(h);
}

static cublasOperation_t op(int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

/* C = alpha op(A) op(B) + beta C0, through the shim (into C) or the real
 * cuBLAS (into R). */
static void gemm(cublasHandle_t h, int ta, int tb, int through_shim)
{
  float alpha = 1.25f, beta = 0.5f;
  float *out = through_shim ? C : R;
  CU(cudaMemcpy(out, C0, (size_t)N * N * 4, cudaMemcpyDeviceToDevice));
  if (through_shim)
    CB(cublasSgemm_v2(h, op(ta), op(tb), N, N, N, &alpha, A, N, B, N, &beta, out, N));
  else
    CB(real_sgemm(h, op(ta), op(tb), N, N, N, &alpha, A, N, B, N, &beta, out, N));
  CU(cudaDeviceSynchronize());
}

static int same_bits(void)
{
  static float hc[N * N], hr[N * N];
  CU(cudaMemcpy(hc, C, sizeof hc, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(hr, R, sizeof hr, cudaMemcpyDeviceToHost));
  return memcmp(hc, hr, sizeof hc) == 0;
}

static double rel_diff(void)
{
  static float hc[N * N], hr[N * N];
  CU(cudaMemcpy(hc, C, sizeof hc, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(hr, R, sizeof hr, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (int i = 0; i < N * N; i++) {
    double d = (double)hc[i] - hr[i];
    num += d * d;
    den += (double)hr[i] * hr[i];
  }
  return sqrt(num / den);
}

static uint64_t count(const char *route, gs_reason r) { return gs_tally_count(route, (int)r); }

/* Rows of the A/B CSV with the given mode. */
static int ab_rows(const char *mode)
{
  FILE *f = fopen(ab_path, "r");
  if (!f) return 0;
  char line[1024], want[32];
  snprintf(want, sizeof want, ",%s,", mode);
  int n = 0;
  while (fgets(line, sizeof line, f)) n += strstr(line, want) != NULL;
  fclose(f);
  return n;
}

static void set_env(const char *ab, const char *mode, const char *brk)
{
  if (ab) setenv("GEMMSHIM_AB", ab, 1); else unsetenv("GEMMSHIM_AB");
  if (mode) setenv("GEMMSHIM_AB_MODE", mode, 1); else unsetenv("GEMMSHIM_AB_MODE");
  if (brk) setenv("GEMMSHIM_TEST_BREAK", brk, 1); else unsetenv("GEMMSHIM_TEST_BREAK");
  gs_config_reload();
}

/* Before any TN call: captured, an unchecked kernel forwards to cuBLAS. */
static void phase_unchecked_capture(cublasHandle_t h)
{
  set_env(NULL, NULL, NULL);
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  gemm(h, 1, 0, 0);   /* the reference; warms cuBLAS's kernel outside the capture */
  CB(cublasSetStream_v2(h, s));
  CU(cudaMemcpy(C, C0, (size_t)N * N * 4, cudaMemcpyDeviceToDevice));
  uint64_t unchecked = count("cublas", GS_R_UNCHECKED), ours = count(KERNEL, GS_R_ROUTED);
  float alpha = 1.25f, beta = 0.5f;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CB(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, N, N, N, &alpha, A, N, B, N, &beta, C, N));
  CU(cudaStreamEndCapture(s, &g));
  CU(cudaGraphInstantiate(&ge, g, 0));
  CU(cudaGraphLaunch(ge, s));
  CU(cudaStreamSynchronize(s));
  CB(cublasSetStream_v2(h, 0));
  verdict("capture before the self-check: forwarded (unchecked), cuBLAS's exact bits on replay",
          count("cublas", GS_R_UNCHECKED) == unchecked + 1 && count(KERNEL, GS_R_ROUTED) == ours &&
              same_bits());
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
}

static void phase_selfcheck(cublasHandle_t h)
{
  set_env(NULL, NULL, NULL);
  uint64_t sc = count("cublas", GS_R_SELFCHECK), ours = count(KERNEL, GS_R_ROUTED);
  gemm(h, 1, 0, 0);
  gemm(h, 1, 0, 1);
  verdict("self-check: first TN call compared, caller gets cuBLAS's exact bits",
          count("cublas", GS_R_SELFCHECK) == sc + 1 && same_bits());
  verdict("self-check: no A/B row (it is not timed)", ab_rows("selfcheck") == 0);
  gemm(h, 1, 0, 1);
  double d = rel_diff();
  verdict("self-check: the second TN call is ours, close to cuBLAS",
          count(KERNEL, GS_R_ROUTED) == ours + 1 && d < 1e-5);
}

static void phase_shadow(cublasHandle_t h)
{
  set_env("1", "shadow", NULL);
  gemm(h, 0, 0, 1);   /* NN's first use: the self-check */
  uint64_t before = count("cublas", GS_R_AB_SHADOW);
  int rows = ab_rows("shadow");
  gemm(h, 0, 0, 0);
  for (int i = 0; i < 3; i++) {
    gemm(h, 0, 0, 1);
    if (!same_bits()) break;
  }
  verdict("A/B shadow: 3 calls, each cuBLAS's exact bits",
          count("cublas", GS_R_AB_SHADOW) == before + 3 && same_bits());
  verdict("A/B shadow: 3 rows written", ab_rows("shadow") == rows + 3);
}

static void phase_use(cublasHandle_t h)
{
  set_env("1", "use", NULL);
  uint64_t before = count(KERNEL, GS_R_AB_COMPARED);
  int rows = ab_rows("use");
  gemm(h, 1, 0, 0);
  gemm(h, 1, 0, 1);
  gemm(h, 1, 0, 1);
  double d = rel_diff();
  verdict("A/B use: ours serves, close to cuBLAS",
          count(KERNEL, GS_R_AB_COMPARED) == before + 2 && d < 1e-5);
  verdict("A/B use: 2 rows written", ab_rows("use") == rows + 2);
  set_env("2", "use", NULL);   /* one call in two */
  before = count(KERNEL, GS_R_AB_COMPARED) + count(KERNEL, GS_R_ROUTED);
  uint64_t compared = count(KERNEL, GS_R_AB_COMPARED);
  for (int i = 0; i < 10; i++) gemm(h, 1, 0, 1);
  uint64_t now_compared = count(KERNEL, GS_R_AB_COMPARED) - compared;
  verdict("A/B sampling 1 in 2: 5 of 10 compared, all 10 ours",
          now_compared == 5 && count(KERNEL, GS_R_AB_COMPARED) + count(KERNEL, GS_R_ROUTED) == before + 10);
}

/* Another thread's A/B calls while this one captures a graph. Everything
 * the worker needs is made before the capture begins (allocations during a
 * global-mode capture are the test's own mistake, not the shim's). */
typedef struct worker {
  cublasHandle_t h;
  cudaStream_t s;
  float *a, *b, *c;
} worker;

static void *ab_worker(void *arg)
{
  worker *w = arg;
  float alpha = 1, beta = 0;
  for (int i = 0; i < 20; i++)
    CB(cublasSgemm_v2(w->h, CUBLAS_OP_T, CUBLAS_OP_N, N, N, N, &alpha, w->a, N, w->b, N, &beta,
                      w->c, N));
  return NULL;
}

static void phase_capture(cublasHandle_t h)
{
  set_env("1", "use", NULL);
  gemm(h, 0, 1, 1);   /* NT's first use, outside the capture */
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CB(cublasSetStream_v2(h, s));
  uint64_t skipped = count(KERNEL, GS_R_AB_SKIPPED_CAPTURING);
  int rows = ab_rows("use");
  float alpha = 1.25f, beta = 0.5f;
  CU(cudaMemcpy(C, C0, (size_t)N * N * 4, cudaMemcpyDeviceToDevice));
  worker w;
  CU(cudaMalloc((void **)&w.a, (size_t)N * N * 4));
  CU(cudaMalloc((void **)&w.b, (size_t)N * N * 4));
  CU(cudaMalloc((void **)&w.c, (size_t)N * N * 4));
  fill(w.a, (size_t)N * N, 7);
  fill(w.b, (size_t)N * N, 8);
  CU(cudaStreamCreateWithFlags(&w.s, cudaStreamNonBlocking));
  CB(cublasCreate_v2(&w.h));
  CB(cublasSetStream_v2(w.h, w.s));
  /* Once before the capture: the first launch of a kernel loads its module
   * (CUDA's lazy loading), which a concurrent global-mode capture does not
   * survive, shim or no shim. */
  ab_worker(&w);
  CU(cudaDeviceSynchronize());
  rows = ab_rows("use");
  pthread_t t;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  pthread_create(&t, NULL, ab_worker, &w);
  CB(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_T, N, N, N, &alpha, A, N, B, N, &beta, C, N));
  usleep(20000);   /* let the other thread's A/B calls overlap the capture */
  CB(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_T, N, N, N, &alpha, A, N, B, N, &beta, C, N));
  pthread_join(t, NULL);
  cudaError_t end = cudaStreamEndCapture(s, &g);
  CU(cudaStreamSynchronize(w.s));
  cublasDestroy_v2(w.h);
  cudaStreamDestroy(w.s);
  cudaFree(w.a); cudaFree(w.b); cudaFree(w.c);
  verdict("capture: ends cleanly while another thread compares", end == cudaSuccess);
  if (end != cudaSuccess) return;
  CU(cudaGraphInstantiate(&ge, g, 0));
  CU(cudaGraphLaunch(ge, s));
  CU(cudaStreamSynchronize(s));
  /* the graph ran C = alpha A B^T + beta (alpha A B^T + beta C0) */
  float hbeta = beta;
  CU(cudaMemcpy(R, C0, (size_t)N * N * 4, cudaMemcpyDeviceToDevice));
  CB(cublasSetStream_v2(h, 0));
  CB(real_sgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, N, N, N, &alpha, A, N, B, N, &hbeta, R, N));
  CB(real_sgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, N, N, N, &alpha, A, N, B, N, &hbeta, R, N));
  CU(cudaDeviceSynchronize());
  double d = rel_diff();
  verdict("capture: the replayed graph is right", d < 1e-5);
  verdict("capture: its 2 calls skipped A/B, counted",
          count(KERNEL, GS_R_AB_SKIPPED_CAPTURING) == skipped + 2);
  verdict("capture: only the other thread's 20 calls wrote rows", ab_rows("use") == rows + 20);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
}

static void phase_broken(cublasHandle_t h)
{
  set_env(NULL, NULL, KERNEL);
  uint64_t failed = count("cublas", GS_R_SELFCHECK_FAILED), disabled = count("cublas", GS_R_DISABLED);
  gemm(h, 1, 1, 0);
  gemm(h, 1, 1, 1);   /* TT's first use: the check starts, cuBLAS serves */
  int first_bits = same_bits();
  gemm(h, 1, 1, 1);   /* the next TT call reads the verdict: the broken kernel is caught */
  verdict("broken kernel: self-check fails, caller gets cuBLAS's exact bits",
          count("cublas", GS_R_SELFCHECK_FAILED) == failed + 1 && first_bits && same_bits());
  gemm(h, 1, 0, 0);
  gemm(h, 1, 0, 1);   /* TN passed its check earlier: the kernel is off now */
  verdict("broken kernel: disabled, later calls forwarded",
          count("cublas", GS_R_DISABLED) == disabled + 1 && same_bits());
  set_env(NULL, NULL, NULL);
}

/* ---- 6. a decode kernel under A/B ---------------------------------------- */

#define DECODE "gemm_decode_bf16"
static gemmex_fn real_gemmex;

static uint16_t *bf16_buffer(size_t n, uint64_t seed)
{
  uint16_t *d;
  CU(cudaMalloc((void **)&d, n * 2));
  gs_check_fill_bf16(d, n, seed);
  return d;
}

/* The last row of the A/B CSV names this kernel, mode and shape. */
static int last_row_is(const char *mode, int m, int n, int k)
{
  FILE *f = fopen(ab_path, "r");
  if (!f) return 0;
  char line[1024], last[1024] = "", want[128];
  while (fgets(line, sizeof line, f)) memcpy(last, line, sizeof last);
  fclose(f);
  snprintf(want, sizeof want, ",%d,%d,%d,1," DECODE ",%s,", m, n, k, mode);
  return strstr(last, want) != NULL;
}

static void check_decode_case(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                              const char *what)
{
  const int lda = ta ? k : m, ldb = tb ? n : k;
  const size_t nc = (size_t)m * n;
  uint16_t *a = bf16_buffer((size_t)lda * (ta ? m : k), 11);
  uint16_t *b = bf16_buffer((size_t)ldb * (tb ? k : n), 12);
  uint16_t *c0 = bf16_buffer(nc, 13), *c;
  CU(cudaMalloc((void **)&c, nc * 2));
  /* host copies: this call's bits, cuBLAS's own, the kernel's outside A/B */
  uint16_t *hc = malloc(nc * 2), *ref = malloc(nc * 2), *ours = malloc(nc * 2);
  const float alpha = 1.25f, beta = 0.5f;
  /* through the shim (or past it) into c, from c0; its bits into host */
#define CALL(fn, host)                                                                            do {                                                                                              CU(cudaMemcpy(c, c0, nc * 2, cudaMemcpyDeviceToDevice));                                        CB(fn(h, op(ta), op(tb), m, n, k, &alpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &beta,           c, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));                   CU(cudaDeviceSynchronize());                                                                    CU(cudaMemcpy(host, c, nc * 2, cudaMemcpyDeviceToHost));                                      } while (0)
  set_env(NULL, NULL, NULL);
  CALL(real_gemmex, ref);
  /* the first call of this path is its self-check (cuBLAS serves) */
  const uint64_t routed = count(DECODE, GS_R_ROUTED);
  for (int i = 0; i < 5 && count(DECODE, GS_R_ROUTED) == routed; i++) CALL(cublasGemmEx, ours);
  const int served = count(DECODE, GS_R_ROUTED) == routed + 1;
  char line[300];
  set_env("1", "shadow", NULL);
  uint64_t before = count("cublas", GS_R_AB_SHADOW);
  int rows = ab_rows("shadow");
  CALL(cublasGemmEx, hc);
  snprintf(line, sizeof line, "%s: A/B shadow: cuBLAS's exact bits, one row naming the kernel",
           what);
  verdict(line, served && count("cublas", GS_R_AB_SHADOW) == before + 1 &&
                    ab_rows("shadow") == rows + 1 && last_row_is("shadow", m, n, k) &&
                    !memcmp(hc, ref, nc * 2));
  set_env("1", "use", NULL);
  before = count(DECODE, GS_R_AB_COMPARED);
  rows = ab_rows("use");
  CALL(cublasGemmEx, hc);
  snprintf(line, sizeof line, "%s: A/B use: the kernel's own bits, one row naming it", what);
  verdict(line, served && count(DECODE, GS_R_AB_COMPARED) == before + 1 &&
                    ab_rows("use") == rows + 1 && last_row_is("use", m, n, k) &&
                    !memcmp(hc, ours, nc * 2));
#undef CALL
  set_env(NULL, NULL, NULL);
  free(hc), free(ref), free(ours);
  cudaFree(a), cudaFree(b), cudaFree(c0), cudaFree(c);
}

static void phase_decode(cublasHandle_t h)
{
  setenv("GEMMSHIM_FORCE", DECODE, 1);
  check_decode_case(h, 1, 0, 1024, 8, 4096, "decode, few columns (TN 1024x8x4096)");
  check_decode_case(h, 1, 1, 4, 1024, 4096, "decode, few rows (TT 4x1024x4096)");
  setenv("GEMMSHIM_FORCE", "1", 1);
  set_env(NULL, NULL, NULL);
}

int main(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("check_ab: no CUDA GPU available\n");
    return 77;
  }
  snprintf(ab_path, sizeof ab_path, "/tmp/check_ab.%ld.csv", (long)getpid());
  unlink(ab_path);
  setenv("GEMMSHIM_FORCE", "1", 1);
  setenv("GEMMSHIM_AB_LOG", ab_path, 1);
  *(void **)&real_sgemm = dlsym(RTLD_NEXT, "cublasSgemm_v2");
  *(void **)&real_gemmex = dlsym(RTLD_NEXT, "cublasGemmEx");
  if (!real_sgemm || !real_gemmex) return 1;
  size_t bytes = (size_t)N * N * 4;
  CU(cudaMalloc((void **)&A, bytes)); CU(cudaMalloc((void **)&B, bytes));
  CU(cudaMalloc((void **)&C0, bytes)); CU(cudaMalloc((void **)&C, bytes));
  CU(cudaMalloc((void **)&R, bytes));
  fill(A, (size_t)N * N, 1); fill(B, (size_t)N * N, 2); fill(C0, (size_t)N * N, 3);
  cublasHandle_t h;
  CB(cublasCreate_v2(&h));
  /* a first call binds cuBLAS (and cuBLASLt) in the shim, as a program's
   * does, before our kernels are loaded for the context: the loader then
   * finds what the route cublaslt needs where a table names it (an empty
   * call: no kernel's class, no layout's first use) */
  {
    const float zero = 0.0f;
    CB(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 0, 0, &zero, A, 1, B, 1, &zero, C, 1));
  }
  if (!gs_check_wait_loaded()) return 1;
  phase_unchecked_capture(h);
  phase_selfcheck(h);
  phase_shadow(h);
  phase_use(h);
  phase_capture(h);
  phase_broken(h);
  phase_decode(h);
  cublasDestroy_v2(h);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "cat %s", ab_path);
  if (getenv("GS_CHECK_VERBOSE") && system(cmd) != 0) {}
  if (getenv("OUT")) {
    snprintf(cmd, sizeof cmd, "cp %s %s/check_ab.csv", ab_path, getenv("OUT"));
    if (system(cmd) != 0) {}
  }
  unlink(ab_path);
  printf("check_ab: %d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
