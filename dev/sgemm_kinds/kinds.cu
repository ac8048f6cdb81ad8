/* sgemm_kinds: does cuBLAS's FP32 GEMM have one Inf/NaN pattern? Issue 21
 * asks BF16x6 for "the same Inf and NaN pattern as SGEMM's"; BF16x6 gives
 * the FP64 result's kind wherever SGEMM's own sums overflow. If cuBLAS's
 * own FP32 algorithms disagree with each other on those outputs, "SGEMM's
 * pattern" is a property of one algorithm's summation order, not of
 * FP32 GEMM, and FP64's is the only pattern a kernel can be held to.
 *
 * Data: uniform [-1, 1) A (m x k) and B (k x n), column-major, then at
 * eight shared k ("hot" positions) every fourth row of A holds +-2^64
 * (random signs) and every fourth column of B 2^63, each times 1..1.25:
 * products of about 2^127, finite in FP32, two of one sign in a row
 * overflow, and whether a sum overflows depends on the order its terms are
 * added in. No Inf or NaN in the inputs.
 *
 * Compared, each against cublasSgemm's output and the FP64 result's kind
 * (cublasDgemm on the same values; its kind: finite if |x| <= FLT_MAX,
 * else +-Inf; NaN stays NaN):
 *   - cublasGemmEx, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT;
 *   - cuBLASLt FP32 matmul with each of its first 16 heuristic algorithms,
 *     32 MiB of workspace (split-K and other reduction orders among them).
 * Prints one line per algorithm: outputs whose kind differs from
 * cublasSgemm's, and from FP64's. Exit 0 (a measurement, not a check), 77
 * without a GPU, 2 on a CUDA or cuBLAS error.
 * --cpu: no GPU; on the same data, over the large outputs (the rows and
 * columns holding the large entries), FP32 fused multiply-adds in K order
 * and in reverse order against each other and against FP64 sums: how much
 * the order alone moves the kinds.
 *
 * Build: make dev/sgemm_kinds/kinds in a build folder (make check builds
 * it). Run: BUILDDIR/dev/sgemm_kinds/kinds [--cpu] [m n k [seed]]. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#define CU(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(2);                                                                       \
    }                                                                                \
  } while (0)
#define CB(x)                                                                          \
  do {                                                                                 \
    cublasStatus_t s_ = (x);                                                           \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      exit(2);                                                                         \
    }                                                                                  \
  } while (0)

/* 0 finite, 1 +Inf, 2 -Inf, 3 NaN */
static int kind(double x)
{
  if (x != x) return 3;
  if (x > (double)FLT_MAX) return 1;
  if (x < -(double)FLT_MAX) return 2;
  return 0;
}

static uint64_t rng_state;
static double uniform01()
{
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) * 0x1p-53;
}

/* --cpu: K order, reverse order and FP64 over the large outputs. */
static int on_cpu(const std::vector<float> &A, const std::vector<float> &B, int m, int n, int k,
                  uint64_t seed)
{
  long outputs = 0, fwd_nf = 0, fp64_nf = 0, fwd_vs_64 = 0, rev_vs_64 = 0, fwd_vs_rev = 0;
  for (int i = 0; i < m; i += 4)
    for (int j = 0; j < n; j += 4) {
      float fwd = 0, rev = 0;
      double d = 0;
      for (int l = 0; l < k; l++) {
        fwd = fmaf(A[i + (size_t)l * m], B[l + (size_t)j * k], fwd);
        d += (double)A[i + (size_t)l * m] * B[l + (size_t)j * k];
      }
      for (int l = k - 1; l >= 0; l--) rev = fmaf(A[i + (size_t)l * m], B[l + (size_t)j * k], rev);
      outputs++;
      fwd_nf += kind(fwd) != 0;
      fp64_nf += kind(d) != 0;
      fwd_vs_64 += kind(fwd) != kind(d);
      rev_vs_64 += kind(rev) != kind(d);
      fwd_vs_rev += kind(fwd) != kind(rev);
    }
  printf("# CPU emulation; m n k %d %d %d, seed %llu; the %ld outputs of the large rows and columns\n",
         m, n, k, (unsigned long long)seed, outputs);
  printf("fp32_k_order_nonfinite,fp64_nonfinite,k_order_vs_fp64,reverse_vs_fp64,k_order_vs_reverse\n");
  printf("%ld,%ld,%ld,%ld,%ld\n", fwd_nf, fp64_nf, fwd_vs_64, rev_vs_64, fwd_vs_rev);
  return 0;
}

int main(int argc, char **argv)
{
  int m = 512, n = 512, k = 2048;
  uint64_t seed = 1;
  const bool cpu = argc > 1 && !strcmp(argv[1], "--cpu");
  if (cpu) argc--, argv++;
  if (argc >= 4) m = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]);
  if (argc >= 5) seed = strtoull(argv[4], nullptr, 10);
  int devices = 0;
  if (!cpu && (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)) {
    printf("sgemm_kinds: no CUDA GPU\n");
    return 77;
  }
  rng_state = seed;
  std::vector<float> A((size_t)m * k), B((size_t)k * n);
  for (float &x : A) x = (float)(2 * uniform01() - 1);
  for (float &x : B) x = (float)(2 * uniform01() - 1);
  /* the hot positions: large products meet there */
  int hot[8];
  for (int t = 0; t < 8; t++) hot[t] = (int)(uniform01() * k);
  for (int i = 0; i < m; i += 4)
    for (int t = 0; t < 8; t++)
      A[i + (size_t)hot[t] * m] = (uniform01() < 0.5 ? -1.0f : 1.0f) * 0x1p64f * (float)(1 + uniform01() / 4);
  for (int j = 0; j < n; j += 4)
    for (int t = 0; t < 8; t++) B[hot[t] + (size_t)j * k] = 0x1p63f * (float)(1 + uniform01() / 4);
  if (cpu) return on_cpu(A, B, m, n, k, seed);
  std::vector<double> Ad(A.begin(), A.end()), Bd(B.begin(), B.end());

  float *dA, *dB, *dC;
  double *dAd, *dBd, *dCd;
  void *ws;
  const size_t ws_bytes = (size_t)32 << 20;
  CU(cudaMalloc(&dA, A.size() * 4));
  CU(cudaMalloc(&dB, B.size() * 4));
  CU(cudaMalloc(&dC, (size_t)m * n * 4));
  CU(cudaMalloc(&dAd, Ad.size() * 8));
  CU(cudaMalloc(&dBd, Bd.size() * 8));
  CU(cudaMalloc(&dCd, (size_t)m * n * 8));
  CU(cudaMalloc(&ws, ws_bytes));
  CU(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dAd, Ad.data(), Ad.size() * 8, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dBd, Bd.data(), Bd.size() * 8, cudaMemcpyHostToDevice));
  cublasHandle_t h;
  cublasLtHandle_t lt;
  CB(cublasCreate(&h));
  CB(cublasLtCreate(&lt));
  const float one = 1, zero = 0;
  const double oned = 1, zerod = 0;

  std::vector<double> ref((size_t)m * n);
  CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &oned, dAd, m, dBd, k, &zerod, dCd, m));
  CU(cudaMemcpy(ref.data(), dCd, ref.size() * 8, cudaMemcpyDeviceToHost));
  std::vector<float> sg((size_t)m * n), out((size_t)m * n);
  CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &zero, dC, m));
  CU(cudaMemcpy(sg.data(), dC, sg.size() * 4, cudaMemcpyDeviceToHost));

  long sg_nonfinite = 0, sg_vs_fp64 = 0, fp64_nonfinite = 0;
  for (size_t e = 0; e < sg.size(); e++) {
    sg_nonfinite += kind(sg[e]) != 0;
    fp64_nonfinite += kind(ref[e]) != 0;
    sg_vs_fp64 += kind(sg[e]) != kind(ref[e]);
  }
  cudaDeviceProp prop;
  CU(cudaGetDeviceProperties(&prop, 0));
  printf("# device: %s; m n k %d %d %d, seed %llu; cuBLAS %d\n", prop.name, m, n, k,
         (unsigned long long)seed, CUBLAS_VERSION);
  printf("# cublasSgemm: %ld non-finite outputs, %ld of %zu differ in kind from FP64's "
         "(FP64: %ld non-finite)\n", sg_nonfinite, sg_vs_fp64, sg.size(), fp64_nonfinite);
  printf("algorithm,status,nonfinite,kind_differs_from_sgemm,kind_differs_from_fp64\n");
  auto report = [&](const char *name) {
    CU(cudaMemcpy(out.data(), dC, out.size() * 4, cudaMemcpyDeviceToHost));
    long nf = 0, vs_sg = 0, vs_64 = 0;
    for (size_t e = 0; e < out.size(); e++) {
      nf += kind(out[e]) != 0;
      vs_sg += kind(out[e]) != kind(sg[e]);
      vs_64 += kind(out[e]) != kind(ref[e]);
    }
    printf("%s,ok,%ld,%ld,%ld\n", name, nf, vs_sg, vs_64);
  };
  CU(cudaMemset(dC, 0, (size_t)m * n * 4));
  CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, CUDA_R_32F, m, dB, CUDA_R_32F, k,
                  &zero, dC, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  CU(cudaDeviceSynchronize());
  report("gemmex_default");

  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  CB(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m));
  CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k));
  CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, m));
  cublasLtMatmulPreference_t pref;
  CB(cublasLtMatmulPreferenceCreate(&pref));
  CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                          sizeof ws_bytes));
  cublasLtMatmulHeuristicResult_t res[16];
  int found = 0;
  CB(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 16, res, &found));
  for (int i = 0; i < found; i++) {
    int32_t id = 0, splitk = 0, red = 0, tile = 0;
    size_t w;
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                         sizeof splitk, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red,
                                         sizeof red, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                         sizeof tile, &w);
    char name[96];
    snprintf(name, sizeof name, "lt#%d id=%d tile=%d splitk=%d reduction=%d", i + 1, id, tile,
             splitk, red);
    CU(cudaMemset(dC, 0, (size_t)m * n * 4));
    cublasStatus_t st = cublasLtMatmul(lt, desc, &one, dA, la, dB, lb, &zero, dC, lc, dC, lc,
                                       &res[i].algo, ws, ws_bytes, 0);
    if (st != CUBLAS_STATUS_SUCCESS) {
      printf("%s,status %d,-,-,-\n", name, (int)st);
      continue;
    }
    CU(cudaDeviceSynchronize());
    report(name);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  cublasDestroy(h);
  return 0;
}
