/* gemmshim-bench: one routed kernel beside cuBLAS, same process, same data.
 *
 *   gemmshim-bench --kernel sgemm_simt --shapes bench/shapes/sgemm.txt \
 *                  [--csv out.csv] [--iters 20] [--warmup 3] [--selftest]
 *   gemmshim-bench --kernel bf16_wgmma --shapes bench/shapes/bf16.txt \
 *                  [--csv out.csv] [--iters N] [--preheat-ms MS] [--selftest]
 *   gemmshim-bench --kernel f32_3xtf32 --shapes bench/shapes/f32_3xtf32.txt \
 *                  [--csv out.csv] [--iters N] [--preheat-ms MS] [--selftest]
 * --sm-target N (bf16_wgmma only): cuBLAS's handle gets
 * cublasSetSmCountTarget(N) and our launcher the same limit, as the shim
 * passes a caller's target (only the persistent build honours it).
 *
 * Shape file: one "m n k layout" per line (layout NN, TN, NT or TT: op(A)
 * then op(B), as cuBLAS's transa/transb), '#' starts a comment.
 *
 * Kernels: sgemm_simt (FP32; cuBLAS reference cublasSgemm) and bf16_wgmma
 * (A, B, C, D bf16, FP32 accumulation; cuBLAS reference cublasGemmEx with
 * A = B = C = CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP).
 * bf16_wgmma is linked in when its object is (a weak reference: a bench
 * built without kernels/gemm_bf16_wgmma.o says so and exits 2). Its errors
 * pass at 1.5x cuBLAS's error vs FP64 (sgemm_simt: 2x).
 *
 * f32_3xtf32 (FP32 on tensor cores, 3xTF32 with per-chunk FP32
 * accumulation; kernels/gemm_f32_3xtf32.cu, weakly linked like bf16_wgmma)
 * runs beside cuBLAS SGEMM in plain FP32 (CUBLAS_DEFAULT_MATH: not TF32).
 * Per shape it measures both errors vs FP64 twice: on randn data (timed
 * too) and on wide-dynamic-range data (randn * exp(4 N(0,1))); it passes
 * at issue 6's targets: ours <= 0.5x cuBLAS's error on randn data and
 * <= 1.0x on wide data. Its --selftest battery adds non-finite inputs
 * (the Inf/NaN pattern must equal SGEMM's), values near FLT_MAX and near
 * FLT_MIN (the latter reported against a TF32-level bound, see the
 * kernel's NOTES) to the bf16 battery, and runs once per layout the linked
 * kernel supports (TN; also NN, NT and TT when the kernel is built with
 * -DGS_3XTF32_LAYOUTS=1), checking that the others are refused.
 * --preheat-ms runs cuBLAS alone that long before the sweep, so every
 * shape is measured in the sustained (power-capped) state rather than the
 * first ones at boost clock.
 *
 * Per shape: random data in [-1, 1) (never zeros); correctness first: C and
 * both outputs poisoned with NaN, beta = 0, ours and cuBLAS compared with an
 * FP64 GPU reference by relative Frobenius error over all rows of up to 256
 * sampled columns. Then timing: inputs rotate over enough buffer sets that
 * the working set passes 3x the 60 MB L2 (memory use bounded for huge
 * shapes), warm-up, then --iters samples of ours and cuBLAS interleaved
 * (alternating which runs first), each sample timed with CUDA events around
 * enough back-to-back calls to last about a millisecond; medians reported.
 * The SM clock is read through NVML (dlopen'ed at run time, skipped cleanly
 * if absent) while the samples run, else measured with a clock64/globaltimer
 * kernel right after them.
 *
 * --selftest runs the contract battery first (all layouts, alpha/beta
 * variants, beta == 0 over NaN C, device scalars, bias, D aliasing C,
 * sub-matrix views, tiles over 2^31 bytes, refusal of unsupported shapes,
 * bit-identical reruns).
 *
 * Exit status: 0 ok; 1 if any of our results is off by more than 2x (bf16:
 * 1.5x; f32_3xtf32: the targets above) cuBLAS's error vs FP64 (or any
 * selftest fails); 2 on a usage or CUDA error. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gemm_bf16_wgmma.h"
#include "gemm_f32_3xtf32.h"
#include "sgemm_simt.h"

/* Weak: the bench links and runs sgemm_simt without the bf16 object. */
extern "C" int gs_gemm_bf16_wgmma_supports(int64_t, int64_t, int64_t, int, int, const void *,
                                           int64_t, const void *, int64_t, const void *, int64_t,
                                           int) __attribute__((weak));
extern "C" gs_kstatus gs_gemm_bf16_wgmma_launch(const gs_kernel_args *) __attribute__((weak));
/* Weak too: the bench links and runs the other modes without the 3xTF32 object. */
extern "C" int gs_gemm_f32_3xtf32_supports(int64_t, int64_t, int64_t, int, int, const void *,
                                           int64_t, const void *, int64_t, const void *, int64_t,
                                           int) __attribute__((weak));
extern "C" gs_kstatus gs_gemm_f32_3xtf32_launch(const gs_kernel_args *) __attribute__((weak));
typedef __nv_bfloat16 bf16;

#define CK(x)                                                                      \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(2);                                                                     \
    }                                                                              \
  } while (0)
#define CKB(x)                                                                     \
  do {                                                                             \
    cublasStatus_t s_ = (x);                                                       \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                             \
      fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      exit(2);                                                                     \
    }                                                                              \
  } while (0)
#define CKL() CK(cudaGetLastError())

/* ------------------------------------------------------------------ NVML */
struct Nvml {
  void *lib = nullptr, *dev = nullptr;
  int (*getClock)(void *, int, unsigned *) = nullptr;
  int (*getPower)(void *, unsigned *) = nullptr;
  char driver[96] = "unknown";
  void open(int cuda_dev) {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = (int (*)(void))dlsym(lib, "nvmlInit_v2");
    auto byBus = (int (*)(const char *, void **))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    auto drv = (int (*)(char *, unsigned))dlsym(lib, "nvmlSystemGetDriverVersion");
    getClock = (int (*)(void *, int, unsigned *))dlsym(lib, "nvmlDeviceGetClockInfo");
    getPower = (int (*)(void *, unsigned *))dlsym(lib, "nvmlDeviceGetPowerUsage");
    char bus[64];
    if (!init || !byBus || init() != 0 || cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_dev) != cudaSuccess ||
        byBus(bus, &dev) != 0) {
      dev = nullptr;
      return;
    }
    if (drv) drv(driver, sizeof driver);
  }
  int clock_mhz() {
    unsigned c = 0;
    if (dev && getClock && getClock(dev, 1 /*NVML_CLOCK_SM*/, &c) == 0) return (int)c;
    return -1;
  }
  int power_w() {
    unsigned p = 0;
    if (dev && getPower && getPower(dev, &p) == 0) return (int)(p / 1000);
    return -1;
  }
};
static Nvml nvml;

/* --------------------------------------------------------- device helpers */
__device__ __forceinline__ uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}
__global__ void fill_uniform(float *p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + i);
    float u = (float)(h >> 40) * (1.0f / 16777216.0f); /* [0,1) */
    float v = 2.f * u - 1.f;
    p[i] = v == 0.f ? 0.5f : v;
  }
}
__global__ void fill_value(float *p, size_t n, float v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = v;
}
static void fill_rand(float *p, size_t n, uint64_t seed) {
  fill_uniform<<<1024, 256>>>(p, n, seed);
  CKL();
}
static void fill_nan(float *p, size_t n) {
  fill_value<<<1024, 256>>>(p, n, nanf(""));
  CKL();
}
/* bf16: the same draw rounded to bf16 (never zero: 0.5 replaces it). */
__global__ void fill_uniform_bf16(bf16 *p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + i);
    float u = (float)(h >> 40) * (1.0f / 16777216.0f);
    bf16 v = __float2bfloat16_rn(2.f * u - 1.f);
    p[i] = __bfloat162float(v) == 0.f ? __float2bfloat16_rn(0.5f) : v;
  }
}
__global__ void fill_value_bf16(bf16 *p, size_t n, float v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = __float2bfloat16_rn(v);
}
static void fill_rand(bf16 *p, size_t n, uint64_t seed) {
  fill_uniform_bf16<<<1024, 256>>>(p, n, seed);
  CKL();
}
static void fill_nan(bf16 *p, size_t n) {
  fill_value_bf16<<<1024, 256>>>(p, n, nanf(""));
  CKL();
}
/* FP32 data for the 3xTF32 kernel: normal draws (Box-Muller on two hashed
 * uniforms) and the distributions of its selftest. dist:
 *   0 randn;
 *   1 wide dynamic range: randn * exp(4 N(0,1)) (issue 6);
 *   2 near FLT_MAX: which == 0 (A): +-(1 + u) * 2^126, every 97th element
 *     +-FLT_MAX exactly; which == 1 (B): 2^-100 * randn (products ~2^26);
 *   3 large products: 2^60 * randn for both (results ~2^124 at k = 256);
 *   4 products near FLT_MIN: 2^-63 * randn for both;
 *   5 inputs near FLT_MIN: A: FLT_MIN * randn (many subnormal), B: 2^100 *
 *     randn. */
__device__ __forceinline__ double unit_open(uint64_t h) { /* (0, 1) */
  return ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
__device__ __forceinline__ float randn_at(uint64_t seed, size_t i, int which) {
  const uint64_t h1 = mix64(seed * 0x9e3779b97f4a7c15ull + 2 * i + 0x51ed27 * (uint64_t)which);
  const uint64_t h2 = mix64(h1 ^ 0xd6e8feb86659fd93ull);
  return (float)(sqrt(-2.0 * log(unit_open(h1))) * cos(6.283185307179586 * unit_open(h2)));
}
__global__ void fill_dist_kernel(float *p, size_t n, uint64_t seed, int dist, int which) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    const float z = randn_at(seed, i, 0);
    float v = z;
    switch (dist) {
      case 1: v = z * expf(4.f * randn_at(seed, i, 1)); break;
      case 2:
        if (which == 0) {
          const float sgn = z < 0.f ? -1.f : 1.f;
          const double u = unit_open(mix64(seed + 77 * i));
          v = (i % 97 == 0) ? sgn * 3.40282347e38f : (float)(sgn * (1.0 + u) * 0x1p126);
        } else {
          v = z * 0x1p-100f;
        }
        break;
      case 3: v = z * 0x1p60f; break;
      case 4: v = z * 0x1p-63f; break;
      case 5: v = which == 0 ? z * 1.17549435e-38f : z * 0x1p100f; break;
      default: break;
    }
    p[i] = v;
  }
}
static void fill_dist(float *p, size_t n, uint64_t seed, int dist, int which) {
  fill_dist_kernel<<<1024, 256>>>(p, n, seed, dist, which);
  CKL();
}
static void fill_randn(float *p, size_t n, uint64_t seed) { fill_dist(p, n, seed, 0, 0); }
static void fill_wide(float *p, size_t n, uint64_t seed) { fill_dist(p, n, seed, 1, 0); }
__host__ __device__ inline double to_d(float x) { return (double)x; }
__device__ inline double to_d(bf16 x) { return (double)__bfloat162float(x); }

/* Column s of the sample is column col_of(s) of the matrix. */
__host__ __device__ inline int64_t col_of(int64_t s, int64_t nsamp, int64_t n) {
  return s * n / nsamp;
}

template <typename T>
struct RefArgs {
  int64_t m, n, k, nsamp;
  int ta, tb;
  const T *A, *B, *C, *bias;
  int64_t lda, ldb, ldc;
  double alpha, beta;
  double *out; /* m x nsamp, column-major */
};
/* FP64 reference, 16 x 16 tiles through shared memory. */
template <typename T>
__global__ void __launch_bounds__(256) ref_gemm(RefArgs<T> r) {
  __shared__ double As[16][17], Bs[16][17];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t i0 = (int64_t)blockIdx.x * 16, s0 = (int64_t)blockIdx.y * 16;
  double acc = 0;
  for (int64_t p0 = 0; p0 < r.k; p0 += 16) {
    { /* As[pp][ii] = op(A)(i0+ii, p0+pp) */
      int ii = r.ta ? ty : tx, pp = r.ta ? tx : ty;
      int64_t i = i0 + ii, pk = p0 + pp;
      double v = 0;
      if (i < r.m && pk < r.k) v = to_d(r.ta ? r.A[pk + i * r.lda] : r.A[i + pk * r.lda]);
      As[pp][ii] = v;
    }
    { /* Bs[pp][ss] = op(B)(p0+pp, col(s0+ss)) */
      int ss = r.tb ? tx : ty, pp = r.tb ? ty : tx;
      int64_t s = s0 + ss, pk = p0 + pp;
      double v = 0;
      if (s < r.nsamp && pk < r.k) {
        int64_t j = col_of(s, r.nsamp, r.n);
        v = to_d(r.tb ? r.B[j + pk * r.ldb] : r.B[pk + j * r.ldb]);
      }
      Bs[pp][ss] = v;
    }
    __syncthreads();
#pragma unroll
    for (int pp = 0; pp < 16; ++pp) acc += As[pp][tx] * Bs[pp][ty];
    __syncthreads();
  }
  int64_t i = i0 + tx, s = s0 + ty;
  if (i < r.m && s < r.nsamp) {
    int64_t j = col_of(s, r.nsamp, r.n);
    double v = r.alpha * acc;
    if (r.beta != 0) v += r.beta * to_d(r.C[i + j * r.ldc]);
    if (r.bias) v += to_d(r.bias[i]);
    r.out[i + s * r.m] = v;
  }
}

/* sums[0] = sum (D - ref)^2, sums[1] = sum ref^2, over the sampled columns.
 * One block: deterministic. */
template <typename T>
__global__ void __launch_bounds__(1024) err_sums(const T *D, int64_t ldd, const double *ref,
                                                int64_t m, int64_t n, int64_t nsamp,
                                                double *sums) {
  __shared__ double s0[1024], s1[1024];
  double a = 0, b = 0;
  for (int64_t s = 0; s < nsamp; ++s) {
    int64_t j = col_of(s, nsamp, n);
    for (int64_t i = threadIdx.x; i < m; i += blockDim.x) {
      double r = ref[i + s * m];
      double d = to_d(D[i + j * ldd]) - r;
      a += d * d;
      b += r * r;
    }
  }
  s0[threadIdx.x] = a;
  s1[threadIdx.x] = b;
  __syncthreads();
  for (int w = 512; w > 0; w >>= 1) {
    if (threadIdx.x < w) {
      s0[threadIdx.x] += s0[threadIdx.x + w];
      s1[threadIdx.x] += s1[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    sums[0] = s0[0];
    sums[1] = s1[0];
  }
}

/* Spin ~cycles SM cycles, report cycles and globaltimer nanoseconds. */
__global__ void clock_probe(long long cycles, unsigned long long *out) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long c0 = clock64(), c1;
  do {
    c1 = clock64();
  } while (c1 - c0 < cycles);
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  out[0] = (unsigned long long)(c1 - c0);
  out[1] = t1 - t0;
}
static int probe_clock_mhz() {
  unsigned long long *d, h[2];
  CK(cudaMalloc(&d, 16));
  clock_probe<<<1, 1>>>(20000000LL, d);
  CKL();
  CK(cudaMemcpy(h, d, 16, cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  return h[1] ? (int)((double)h[0] / (double)h[1] * 1000.0 + 0.5) : -1;
}

/* ----------------------------------------------------------------- problem */
struct Problem {
  int64_t m, n, k;
  int ta, tb;
  int64_t lda, ldb, ldc;
  int64_t a_elems() const { return lda * (ta ? m : k); }
  int64_t b_elems() const { return ldb * (tb ? k : n); }
  int64_t c_elems() const { return ldc * n; }
};
static Problem make_problem(int64_t m, int64_t n, int64_t k, int ta, int tb, int64_t pad = 0) {
  Problem p{m, n, k, ta, tb, (ta ? k : m) + pad, (tb ? n : k) + pad, m + pad};
  return p;
}

template <typename T>
static double rel_err(const Problem &p, const T *D, int64_t ldd, const double *ref,
                      int64_t nsamp, double *dsums) {
  err_sums<<<1, 1024>>>(D, ldd, ref, p.m, p.n, nsamp, dsums);
  CKL();
  double h[2];
  CK(cudaMemcpy(h, dsums, sizeof h, cudaMemcpyDeviceToHost));
  return sqrt(h[0] / h[1]);
}
template <typename T>
struct NoDeduce {
  typedef T type;
};
template <typename T>
static void reference(const Problem &p, const T *A, const T *B, const T *C,
                      const typename NoDeduce<T>::type *bias, double alpha, double beta,
                      int64_t nsamp, double *out) {
  RefArgs<T> r{p.m, p.n, p.k, nsamp, p.ta, p.tb, A, B, C, bias, p.lda, p.ldb, p.ldc,
            alpha, beta, out};
  dim3 grid((unsigned)((p.m + 15) / 16), (unsigned)((nsamp + 15) / 16));
  ref_gemm<<<grid, 256>>>(r);
  CKL();
}

/* The FP32 kernel under test: gs_sgemm_simt_launch, or the 3xTF32 kernel in
 * --kernel f32_3xtf32 mode (set once in main). */
static gs_kstatus (*g_f32_launch)(const gs_kernel_args *) = gs_sgemm_simt_launch;

static gs_kstatus run_ours(const Problem &p, const float *A, const float *B, const float *C,
                           float *D, int64_t ldd, float alpha, float beta, const float *bias,
                           const float *alpha_dev, const float *beta_dev, cudaStream_t st) {
  gs_kernel_args a;
  memset(&a, 0, sizeof a);
  a.m = p.m;
  a.n = p.n;
  a.k = p.k;
  a.trans_a = p.ta;
  a.trans_b = p.tb;
  a.A = A;
  a.lda = p.lda;
  a.B = B;
  a.ldb = p.ldb;
  a.C = C;
  a.ldc = p.ldc;
  a.D = D;
  a.ldd = ldd;
  a.scalars_on_device = alpha_dev != nullptr;
  a.alpha = alpha;
  a.beta = beta;
  a.alpha_dev = alpha_dev;
  a.beta_dev = beta_dev;
  a.bias = bias;
  a.stream = st;
  return g_f32_launch(&a);
}
static void run_cublas(cublasHandle_t h, const Problem &p, const float *A, const float *B,
                       float *C, float alpha, float beta) {
  CKB(cublasSgemm(h, p.ta ? CUBLAS_OP_T : CUBLAS_OP_N, p.tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                  (int)p.m, (int)p.n, (int)p.k, &alpha, A, (int)p.lda, B, (int)p.ldb, &beta, C,
                  (int)p.ldc));
}

/* --sm-target N (bf16 only): cuBLAS's handle gets cublasSetSmCountTarget(N)
 * and our launcher sm_limit = N, as the shim passes a caller's target. */
static int g_sm_target = 0;

/* bf16: our kernel (gs_gemm_bf16_wgmma_launch) and cublasGemmEx with
 * A = B = C = CUDA_R_16BF, FP32 compute and scalars, the default tensor-op
 * algorithm: what PyTorch's bf16 matmuls send. */
static gs_kstatus run_ours(const Problem &p, const bf16 *A, const bf16 *B, const bf16 *C, bf16 *D,
                           int64_t ldd, float alpha, float beta, const bf16 *bias,
                           const float *alpha_dev, const float *beta_dev, cudaStream_t st) {
  gs_kernel_args a;
  memset(&a, 0, sizeof a);
  a.m = p.m;
  a.n = p.n;
  a.k = p.k;
  a.trans_a = p.ta;
  a.trans_b = p.tb;
  a.A = A;
  a.lda = p.lda;
  a.B = B;
  a.ldb = p.ldb;
  a.C = C;
  a.ldc = p.ldc;
  a.D = D;
  a.ldd = ldd;
  a.scalars_on_device = alpha_dev != nullptr;
  a.alpha = alpha;
  a.beta = beta;
  a.alpha_dev = alpha_dev;
  a.beta_dev = beta_dev;
  a.bias = bias;
  a.stream = st;
  a.sm_limit = g_sm_target;
  return gs_gemm_bf16_wgmma_launch(&a);
}
static void run_cublas(cublasHandle_t h, const Problem &p, const bf16 *A, const bf16 *B, bf16 *C,
                       float alpha, float beta) {
  CKB(cublasGemmEx(h, p.ta ? CUBLAS_OP_T : CUBLAS_OP_N, p.tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                   (int)p.m, (int)p.n, (int)p.k, &alpha, A, CUDA_R_16BF, (int)p.lda, B,
                   CUDA_R_16BF, (int)p.ldb, &beta, C, CUDA_R_16BF, (int)p.ldc,
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
}

/* The two kernels as data for the benchmark loop. */
struct KernF32 {
  typedef float T;
  static constexpr double tol = 2.0; /* ours may be 2x cuBLAS's error vs FP64 */
  static constexpr bool wide = false; /* no wide-range error measurement */
  static constexpr double tol_wide = 0;
  static int supports(const Problem &p) {
    return gs_sgemm_simt_supports(p.m, p.n, p.k, p.ta, p.tb, (void *)256, p.lda, (void *)256,
                                  p.ldb, (void *)256, p.ldc, 0);
  }
  static void fill(float *p, size_t n, uint64_t seed) { fill_rand(p, n, seed); }
};
struct KernBF16 {
  typedef bf16 T;
  static constexpr double tol = 1.5;
  static constexpr bool wide = false;
  static constexpr double tol_wide = 0;
  static int supports(const Problem &p) {
    return gs_gemm_bf16_wgmma_supports(p.m, p.n, p.k, p.ta, p.tb, (void *)256, p.lda,
                                       (void *)256, p.ldb, (void *)256, p.ldc, 0);
  }
  static void fill(bf16 *p, size_t n, uint64_t seed) { fill_rand(p, n, seed); }
};
/* 3xTF32: issue 6's accuracy targets against cuBLAS SGEMM (FP32) vs FP64:
 * at most 0.5x its error on randn data, at most 1.0x on wide-range data. */
struct KernF32x3 {
  typedef float T;
  static constexpr double tol = 0.5;
  static constexpr bool wide = true;
  static constexpr double tol_wide = 1.0;
  static int supports(const Problem &p) {
    return gs_gemm_f32_3xtf32_supports(p.m, p.n, p.k, p.ta, p.tb, (void *)256, p.lda,
                                       (void *)256, p.ldb, (void *)256, p.ldc, 0);
  }
  static void fill(float *p, size_t n, uint64_t seed) { fill_randn(p, n, seed); }
};

static const char *layout_name(int ta, int tb) {
  static const char *names[2][2] = {{"NN", "NT"}, {"TN", "TT"}};
  return names[ta][tb];
}

/* -------------------------------------------------------------- selftest */
static int selftest(cublasHandle_t h) {
  int fails = 0, cases = 0;
  float *dscal;
  double *dsums;
  CK(cudaMalloc(&dscal, 2 * sizeof(float)));
  CK(cudaMalloc(&dsums, 2 * sizeof(double)));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

  struct Case {
    int64_t m, n, k, pad;
    float alpha, beta;
    int dev_scalars, bias, alias;
  };
  std::vector<Case> list;
  const float ab[3][2] = {{1.f, 0.f}, {-0.5f, 1.f}, {2.f, 0.3f}};
  for (int v = 0; v < 3; ++v)
    for (int dev = 0; dev < 2; ++dev)
      for (int bias = 0; bias < 2; ++bias) {
        Case c{1536, 1024, 528, 0, ab[v][0], ab[v][1], dev, bias, 0};
        list.push_back(c);
      }
  list.push_back({1280, 1536, 1024, 36, 1.f, 0.f, 0, 0, 0});   /* sub-views */
  list.push_back({1280, 1536, 1024, 36, 0.7f, 0.3f, 1, 1, 0}); /* sub-views, all on */
  list.push_back({2048, 1024, 256, 0, 1.f, 1.f, 0, 0, 1});     /* D aliases C */
  list.push_back({2048, 1024, 256, 4, -2.f, 0.5f, 1, 1, 1});   /* aliasing + views */
  list.push_back({128, 128, 16, 0, 1.f, 0.f, 0, 0, 0});        /* smallest */
  list.push_back({128, 128, 32, 0, 1.f, 0.f, 0, 0, 0});        /* k < STAGES tiles */
  list.push_back({1024, 640, 4096, 0, 1.f, 0.f, 0, 1, 0});
  /* Few tiles: cuBLAS splits K there and is 2-3x more accurate than any
   * one-pass FP32 accumulation; reported, not judged (never routed: the
   * router takes only shapes where we are faster, which needs full waves). */
  list.push_back({384, 256, 528, 0, 1.f, 0.f, 0, 0, 0});

  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (const Case &c : list) {
        ++cases;
        Problem p = make_problem(c.m, c.n, c.k, ta, tb, c.pad);
        float *A, *B, *C, *C0, *D, *Dc, *bias = nullptr;
        double *ref;
        int64_t nsamp = std::min<int64_t>(p.n, 256);
        CK(cudaMalloc(&A, p.a_elems() * 4));
        CK(cudaMalloc(&B, p.b_elems() * 4));
        CK(cudaMalloc(&C, p.c_elems() * 4));
        CK(cudaMalloc(&C0, p.c_elems() * 4));
        CK(cudaMalloc(&D, p.c_elems() * 4));
        CK(cudaMalloc(&Dc, p.c_elems() * 4));
        CK(cudaMalloc(&ref, p.m * nsamp * 8));
        fill_rand(A, p.a_elems(), 11 + cases);
        fill_rand(B, p.b_elems(), 12 + cases);
        if (c.beta != 0.f)
          fill_rand(C, p.c_elems(), 13 + cases);
        else
          fill_nan(C, p.c_elems());
        if (c.bias) {
          CK(cudaMalloc(&bias, p.m * 4));
          fill_rand(bias, p.m, 14 + cases);
        }
        CK(cudaMemcpy(C0, C, p.c_elems() * 4, cudaMemcpyDeviceToDevice));
        fill_nan(D, p.c_elems());
        reference(p, A, B, C0, bias, c.alpha, c.beta, nsamp, ref);
        float hs[2] = {c.alpha, c.beta};
        CK(cudaMemcpy(dscal, hs, sizeof hs, cudaMemcpyHostToDevice));
        /* device scalars: pass garbage host values so reading them would show */
        float ha = c.dev_scalars ? 1234.f : c.alpha, hb = c.dev_scalars ? 77.f : c.beta;
        float *out = c.alias ? C : D;
        CK(cudaDeviceSynchronize());
        gs_kstatus s = run_ours(p, A, B, C, out, p.ldc, ha, hb, bias,
                                c.dev_scalars ? dscal : nullptr, c.dev_scalars ? dscal + 1 : nullptr,
                                st);
        CK(cudaStreamSynchronize(st));
        CKL();
        double e = s == GS_K_OK ? rel_err(p, out, p.ldc, ref, nsamp, dsums) : NAN;
        /* bits identical on a rerun (non-aliased only: aliasing consumed C) */
        int same = 1;
        if (s == GS_K_OK && !c.alias) {
          fill_nan(Dc, p.c_elems());
          run_ours(p, A, B, C, Dc, p.ldc, ha, hb, bias, c.dev_scalars ? dscal : nullptr,
                   c.dev_scalars ? dscal + 1 : nullptr, st);
          CK(cudaStreamSynchronize(st));
          std::vector<float> h1(p.c_elems()), h2(p.c_elems());
          CK(cudaMemcpy(h1.data(), D, p.c_elems() * 4, cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(h2.data(), Dc, p.c_elems() * 4, cudaMemcpyDeviceToHost));
          for (int64_t j = 0; j < p.n && same; ++j)
            same = memcmp(&h1[j * p.ldc], &h2[j * p.ldc], p.m * 4) == 0;
        }
        /* cuBLAS's own error on the same problem (no bias term in plain SGEMM) */
        double ec = NAN, tol = 1e-5;
        if (!c.bias) {
          CK(cudaMemcpy(Dc, C0, p.c_elems() * 4, cudaMemcpyDeviceToDevice));
          run_cublas(h, p, A, B, Dc, c.alpha, c.beta);
          CK(cudaDeviceSynchronize());
          ec = rel_err(p, Dc, p.ldc, ref, nsamp, dsums);
          tol = 2 * ec;
        }
        const bool info = c.m * c.n <= 384 * 256 && c.k > 256;
        int ok = s == GS_K_OK && e <= tol && same;
        if (info && s == GS_K_OK && same && e <= 1e-5) ok = 2;
        if (!ok) ++fails;
        printf("selftest %s m=%lld n=%lld k=%lld pad=%lld alpha=%g beta=%g %s%s%s: err %.3e "
               "(cublas %.3e) %s%s\n",
               layout_name(ta, tb), (long long)c.m, (long long)c.n, (long long)c.k,
               (long long)c.pad, c.alpha, c.beta, c.dev_scalars ? "devscal " : "",
               c.bias ? "bias " : "", c.alias ? "alias " : "", e, ec,
               ok == 2 ? "info (small grid: cuBLAS splits K)" : ok ? "ok" : "FAIL",
               same ? "" : " (bits differ on rerun)");
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
        cudaFree(C0);
        cudaFree(D);
        cudaFree(Dc);
        cudaFree(ref);
        if (bias) cudaFree(bias);
      }

  /* Tiles beyond 2^31 bytes: 64-bit index math (A, then B, over 2 GiB). */
  {
    struct Big {
      int64_t m, n, k;
      int ta, tb;
    } bigs[] = {{32768, 256, 16512, 0, 0}, {32768, 256, 16512, 1, 0}, {256, 32768, 16512, 0, 1},
                {256, 32768, 16512, 1, 1}};
    for (const Big &b : bigs) {
      ++cases;
      Problem p = make_problem(b.m, b.n, b.k, b.ta, b.tb);
      float *A, *B, *C, *D;
      double *ref;
      int64_t nsamp = std::min<int64_t>(p.n, 64);
      CK(cudaMalloc(&A, p.a_elems() * 4));
      CK(cudaMalloc(&B, p.b_elems() * 4));
      CK(cudaMalloc(&C, p.c_elems() * 4));
      CK(cudaMalloc(&D, p.c_elems() * 4));
      CK(cudaMalloc(&ref, p.m * nsamp * 8));
      fill_rand(A, p.a_elems(), 101);
      fill_rand(B, p.b_elems(), 102);
      fill_nan(C, p.c_elems());
      fill_nan(D, p.c_elems());
      reference(p, A, B, C, nullptr, 1.0, 0.0, nsamp, ref);
      CK(cudaDeviceSynchronize()); /* st does not wait for the legacy stream */
      gs_kstatus s = run_ours(p, A, B, C, D, p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, st);
      CK(cudaStreamSynchronize(st));
      double e = s == GS_K_OK ? rel_err(p, D, p.ldc, ref, nsamp, dsums) : NAN;
      fill_nan(D, p.c_elems());
      run_cublas(h, p, A, B, D, 1.f, 0.f);
      CK(cudaDeviceSynchronize());
      double ec = rel_err(p, D, p.ldc, ref, nsamp, dsums);
      int ok = s == GS_K_OK && e <= 2 * ec;
      if (!ok) ++fails;
      printf("selftest big %s m=%lld n=%lld k=%lld (%.2f GiB operand): err %.3e (cublas %.3e) %s\n",
             layout_name(b.ta, b.tb), (long long)b.m, (long long)b.n, (long long)b.k,
             std::max(p.a_elems(), p.b_elems()) * 4.0 / (1 << 30), e, ec, ok ? "ok" : "FAIL");
      cudaFree(A);
      cudaFree(B);
      cudaFree(C);
      cudaFree(D);
      cudaFree(ref);
    }
  }

  /* Refusals: outside the class nothing is launched. */
  {
    float *X;
    CK(cudaMalloc(&X, 1 << 20));
    struct Bad {
      int64_t m, n, k, lda, off;
      const char *why;
    } bads[] = {{100, 128, 16, 100, 0, "m % 128"},
                {128, 120, 16, 128, 0, "n % 128"},
                {128, 128, 20, 128, 0, "k % 16"},
                {128, 128, 16, 130, 0, "lda % 4"},
                {128, 128, 16, 128, 1, "A misaligned"},
                {128, 128, 16, 64, 0, "lda < m"}};
    for (const Bad &b : bads) {
      ++cases;
      Problem p = make_problem(b.m, b.n, b.k, 0, 0);
      p.lda = b.lda;
      gs_kstatus s = run_ours(p, X + b.off, X, X, X, p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, st);
      int sup = gs_sgemm_simt_supports(p.m, p.n, p.k, 0, 0, X + b.off, p.lda, X, p.ldb, X, p.ldc, 0);
      int ok = s == GS_K_UNSUPPORTED && !sup;
      if (!ok) ++fails;
      printf("selftest refuse %s: %s\n", b.why, ok ? "ok" : "FAIL");
    }
    CK(cudaStreamSynchronize(st));
    cudaFree(X);
  }

  printf("selftest: %d passed, %d failed\n", cases - fails, fails);
  cudaFree(dscal);
  cudaFree(dsums);
  cudaStreamDestroy(st);
  return fails;
}

/* The battery `list` (written for TN) once per layout l with run[l] set,
 * in the order of `lays` ({trans_a, trans_b} pairs). */
template <class Case, int N>
static void repeat_per_layout(std::vector<Case> &list, const int (&lays)[N][2], const int *run) {
  std::vector<Case> all;
  for (int l = 0; l < N; ++l)
    if (run[l])
      for (Case c : list) {
        c.ta = lays[l][0];
        c.tb = lays[l][1];
        all.push_back(c);
      }
  list.swap(all);
}

/* ------------------------------------------------------- selftest, bf16 */
/* 1 if the linked bf16 kernel handles layout (ta, tb) at all (a minimal,
 * aligned problem with tight leading dims). */
static int bf16_layout_supported(int ta, int tb) {
  Problem p = make_problem(128, 256, 64, ta, tb);
  return gs_gemm_bf16_wgmma_supports(p.m, p.n, p.k, ta, tb, (void *)256, p.lda, (void *)256,
                                     p.ldb, (void *)256, p.ldc, 0);
}

/* The bf16_wgmma contract battery, run for each of the layouts TN, NN and
 * NT that the linked kernel supports (stage 1: TN only; the persistent
 * kernel: all three); the unsupported ones must be refused. Each case
 * is checked against the FP64 reference (inputs are exact bf16 values) and
 * against cuBLAS GemmEx's own error on the same problem: ours must be within
 * 1.5x of it. Bias cases (cuBLAS GemmEx has no bias) are judged against
 * 1.5x cuBLAS's error on the same problem without the bias (the relative
 * output rounding is the same). */
static int selftest_bf16(cublasHandle_t h) {
  int fails = 0, cases = 0;
  float *dscal;
  double *dsums;
  CK(cudaMalloc(&dscal, 2 * sizeof(float)));
  CK(cudaMalloc(&dsums, 2 * sizeof(double)));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const size_t es = sizeof(bf16);

  /* Graph capture first, so that the launcher's very first call in the
   * process (driver entry point lookup, smem attribute) happens while a
   * stream captures in global mode: two launches with different operands
   * (each with its own tensor maps baked into its kernel node), replayed
   * twice, both results checked. */
  {
    ++cases;
    Problem p = make_problem(512, 768, 320, 1, 0);
    bf16 *A[2], *Bm[2], *D[2], *Dc;
    double *ref[2];
    const int64_t nsamp = 256;
    for (int i = 0; i < 2; ++i) {
      CK(cudaMalloc(&A[i], p.a_elems() * es));
      CK(cudaMalloc(&Bm[i], p.b_elems() * es));
      CK(cudaMalloc(&D[i], p.c_elems() * es));
      CK(cudaMalloc(&ref[i], p.m * nsamp * 8));
      fill_rand(A[i], p.a_elems(), 401 + i);
      fill_rand(Bm[i], p.b_elems(), 403 + i);
      reference<bf16>(p, A[i], Bm[i], (const bf16 *)nullptr, nullptr, 1.0, 0.0, nsamp, ref[i]);
    }
    CK(cudaMalloc(&Dc, p.c_elems() * es));
    CK(cudaDeviceSynchronize());
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    gs_kstatus s0 = GS_K_LAUNCH_FAILED, s1 = GS_K_LAUNCH_FAILED;
    cudaError_t ce = cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal);
    if (ce == cudaSuccess) {
      s0 = run_ours(p, A[0], Bm[0], nullptr, D[0], p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, st);
      s1 = run_ours(p, A[1], Bm[1], nullptr, D[1], p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, st);
      ce = cudaStreamEndCapture(st, &g);
    }
    if (ce == cudaSuccess) ce = cudaGraphInstantiate(&ge, g, 0);
    double e[2] = {NAN, NAN}, ec[2] = {NAN, NAN};
    int ok = ce == cudaSuccess && s0 == GS_K_OK && s1 == GS_K_OK;
    for (int rep = 0; rep < 2 && ok; ++rep) {
      fill_nan(D[0], p.c_elems());
      fill_nan(D[1], p.c_elems());
      CK(cudaDeviceSynchronize());
      CK(cudaGraphLaunch(ge, st));
      CK(cudaStreamSynchronize(st));
      for (int i = 0; i < 2; ++i) {
        e[i] = rel_err(p, D[i], p.ldc, ref[i], nsamp, dsums);
        run_cublas(h, p, A[i], Bm[i], Dc, 1.f, 0.f);
        CK(cudaDeviceSynchronize());
        ec[i] = rel_err(p, Dc, p.ldc, ref[i], nsamp, dsums);
        if (!(e[i] <= 1.5 * ec[i])) ok = 0;
      }
    }
    if (!ok) ++fails;
    printf("selftest TN m=%lld n=%lld k=%lld graph capture (first launch of the process, global "
           "mode, 2 launches, 2 replays): capture %s, status %d/%d, err %.3e/%.3e (cublas "
           "%.3e/%.3e) %s\n",
           (long long)p.m, (long long)p.n, (long long)p.k, cudaGetErrorString(ce), (int)s0,
           (int)s1, e[0], e[1], ec[0], ec[1], ok ? "ok" : "FAIL");
    fflush(stdout);
    cudaGetLastError();
    if (ge) cudaGraphExecDestroy(ge);
    if (g) cudaGraphDestroy(g);
    for (int i = 0; i < 2; ++i) {
      cudaFree(A[i]);
      cudaFree(Bm[i]);
      cudaFree(D[i]);
      cudaFree(ref[i]);
    }
    cudaFree(Dc);
  }

  struct Case {
    int64_t m, n, k, pad;
    float alpha, beta;
    int dev_scalars, bias, alias;
    const char *what;
    int ta = 1, tb = 0; /* TN unless set below */
  };
  std::vector<Case> list;
  const float ab[3][2] = {{1.f, 0.f}, {-0.5f, 1.f}, {2.f, 0.3f}};
  for (int v = 0; v < 3; ++v)
    for (int dev = 0; dev < 2; ++dev)
      for (int bias = 0; bias < 2; ++bias)
        list.push_back({1536, 1024, 576, 0, ab[v][0], ab[v][1], dev, bias, 0, "alpha/beta"});
  list.push_back({1280, 1536, 1024, 64, 1.f, 0.f, 0, 0, 0, "sub-views"});
  list.push_back({1280, 1536, 1024, 8, 0.7f, 0.3f, 1, 1, 0, "sub-views, all on"});
  list.push_back({2048, 1024, 256, 0, 1.f, 1.f, 0, 0, 1, "D aliases C"});
  list.push_back({2048, 1024, 256, 8, -2.f, 0.5f, 1, 1, 1, "aliasing + views"});
  list.push_back({128, 256, 64, 0, 1.f, 0.f, 0, 0, 0, "smallest, one k-tile"});
  list.push_back({1024, 768, 64, 0, 1.f, 0.5f, 0, 1, 0, "one k-tile, beta, bias"});
  list.push_back({256, 512, 192, 0, 1.f, 0.f, 0, 0, 0, "fewer k-tiles than stages"});
  list.push_back({384, 512, 320, 0, 1.f, 0.f, 0, 0, 0, "stages + 1 k-tiles"});
  /* GS_SELFTEST_QUICK=1 (for compute-sanitizer runs): the small cases only. */
  const char *q = getenv("GS_SELFTEST_QUICK");
  const bool quick = q && *q && strcmp(q, "0") != 0;
  if (!quick) {
    list.push_back({1024, 768, 8192, 0, 1.f, 0.f, 0, 0, 0, "large k"});
    list.push_back({512, 512, 16384, 8, 1.f, 0.3f, 1, 1, 0, "large k, all on"});
    list.push_back({2560, 2048, 1024, 0, 1.f, 0.f, 0, 0, 0, "grid of 160 tiles"});
  } else {
    /* one alpha/beta case per scalar mode, with and without bias */
    std::vector<Case> keep;
    for (size_t i = 0; i < list.size(); ++i)
      if (i < 12 ? (i % 3 == 0) : true) keep.push_back(list[i]);
    list.swap(keep);
  }
  /* The battery above (TN) once per supported layout. */
  const int lays[3][2] = {{1, 0}, {0, 0}, {0, 1}};
  int lay_ok[3];
  for (int l = 0; l < 3; ++l) lay_ok[l] = bf16_layout_supported(lays[l][0], lays[l][1]);
  repeat_per_layout(list, lays, lay_ok);

  for (const Case &c : list) {
    ++cases;
    Problem p = make_problem(c.m, c.n, c.k, c.ta, c.tb, c.pad);
    bf16 *A, *B, *C, *C0, *D, *Dc, *bias = nullptr;
    double *ref, *ref_nb = nullptr;
    int64_t nsamp = std::min<int64_t>(p.n, 256);
    CK(cudaMalloc(&A, p.a_elems() * es));
    CK(cudaMalloc(&B, p.b_elems() * es));
    CK(cudaMalloc(&C, p.c_elems() * es));
    CK(cudaMalloc(&C0, p.c_elems() * es));
    CK(cudaMalloc(&D, p.c_elems() * es));
    CK(cudaMalloc(&Dc, p.c_elems() * es));
    CK(cudaMalloc(&ref, p.m * nsamp * 8));
    fill_rand(A, p.a_elems(), 211 + cases);
    fill_rand(B, p.b_elems(), 212 + cases);
    if (c.beta != 0.f)
      fill_rand(C, p.c_elems(), 213 + cases);
    else
      fill_nan(C, p.c_elems());
    if (c.bias) {
      CK(cudaMalloc(&bias, p.m * es));
      fill_rand(bias, p.m, 214 + cases);
      CK(cudaMalloc(&ref_nb, p.m * nsamp * 8));
    }
    CK(cudaMemcpy(C0, C, p.c_elems() * es, cudaMemcpyDeviceToDevice));
    fill_nan(D, p.c_elems());
    reference<bf16>(p, A, B, C0, bias, c.alpha, c.beta, nsamp, ref);
    if (c.bias) reference<bf16>(p, A, B, C0, nullptr, c.alpha, c.beta, nsamp, ref_nb);
    float hs[2] = {c.alpha, c.beta};
    CK(cudaMemcpy(dscal, hs, sizeof hs, cudaMemcpyHostToDevice));
    /* device scalars: garbage host values, so reading them would show */
    float ha = c.dev_scalars ? 1234.f : c.alpha, hb = c.dev_scalars ? 77.f : c.beta;
    bf16 *out = c.alias ? C : D;
    CK(cudaDeviceSynchronize());
    gs_kstatus s = run_ours(p, A, B, C, out, p.ldc, ha, hb, bias,
                            c.dev_scalars ? dscal : nullptr, c.dev_scalars ? dscal + 1 : nullptr,
                            st);
    CK(cudaStreamSynchronize(st));
    CKL();
    double e = s == GS_K_OK ? rel_err(p, out, p.ldc, ref, nsamp, dsums) : NAN;
    /* every element written (the error samples columns; this checks all) */
    int64_t unwritten = 0;
    int same = 1;
    if (s == GS_K_OK) {
      std::vector<uint16_t> h1(p.c_elems()), h2;
      CK(cudaMemcpy(h1.data(), out, p.c_elems() * es, cudaMemcpyDeviceToHost));
      for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) {
          uint16_t b = h1[j * p.ldc + i];
          if ((b & 0x7f80) == 0x7f80 && (b & 0x7f)) ++unwritten; /* NaN */
        }
      /* bits identical on a rerun (non-aliased only: aliasing consumed C) */
      if (!c.alias) {
        fill_nan(Dc, p.c_elems());
        CK(cudaDeviceSynchronize());
        run_ours(p, A, B, C, Dc, p.ldc, ha, hb, bias, c.dev_scalars ? dscal : nullptr,
                 c.dev_scalars ? dscal + 1 : nullptr, st);
        CK(cudaStreamSynchronize(st));
        h2.resize(p.c_elems());
        CK(cudaMemcpy(h2.data(), Dc, p.c_elems() * es, cudaMemcpyDeviceToHost));
        for (int64_t j = 0; j < p.n && same; ++j)
          same = memcmp(&h1[j * p.ldc], &h2[j * p.ldc], p.m * es) == 0;
      }
    }
    /* cuBLAS's own error on the same problem (without the bias) */
    CK(cudaMemcpy(Dc, C0, p.c_elems() * es, cudaMemcpyDeviceToDevice));
    run_cublas(h, p, A, B, Dc, c.alpha, c.beta);
    CK(cudaDeviceSynchronize());
    double ec = rel_err(p, Dc, p.ldc, c.bias ? ref_nb : ref, nsamp, dsums);
    double tol = 1.5 * ec;
    int ok = s == GS_K_OK && e <= tol && same && unwritten == 0;
    if (!ok) ++fails;
    printf("selftest %s m=%lld n=%lld k=%lld pad=%lld alpha=%g beta=%g %s%s%s(%s): err %.3e "
           "(cublas %.3e%s) %s%s%s\n",
           layout_name(c.ta, c.tb), (long long)c.m, (long long)c.n, (long long)c.k,
           (long long)c.pad, c.alpha, c.beta, c.dev_scalars ? "devscal " : "",
           c.bias ? "bias " : "", c.alias ? "alias " : "", c.what, e, ec, c.bias ? ", no bias" : "", ok ? "ok" : "FAIL",
           same ? "" : " (bits differ on rerun)", unwritten ? " (NaN/unwritten elements)" : "");
    fflush(stdout);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(C0);
    cudaFree(D);
    cudaFree(Dc);
    cudaFree(ref);
    if (bias) cudaFree(bias);
    if (ref_nb) cudaFree(ref_nb);
  }

  /* Over 2^31 bytes: A, then B, then D (64-bit addressing: TMA and epilogue). */
  if (!quick) {
    struct Big {
      int64_t m, n, k;
      const char *what;
    } bigs[] = {{131072, 256, 8448, "A"}, {128, 131072, 8448, "B"}, {32768, 33024, 64, "D"}};
    for (int l = 0; l < 3; ++l)
    for (const Big &b : bigs) {
      if (!lay_ok[l]) continue;
      ++cases;
      Problem p = make_problem(b.m, b.n, b.k, lays[l][0], lays[l][1]);
      bf16 *A, *B, *C, *D;
      double *ref;
      int64_t nsamp = std::min<int64_t>(p.n, 64);
      CK(cudaMalloc(&A, p.a_elems() * es));
      CK(cudaMalloc(&B, p.b_elems() * es));
      CK(cudaMalloc(&C, p.c_elems() * es));
      CK(cudaMalloc(&D, p.c_elems() * es));
      CK(cudaMalloc(&ref, p.m * nsamp * 8));
      fill_rand(A, p.a_elems(), 301);
      fill_rand(B, p.b_elems(), 302);
      fill_nan(C, p.c_elems());
      fill_nan(D, p.c_elems());
      reference<bf16>(p, A, B, C, nullptr, 1.0, 0.0, nsamp, ref);
      CK(cudaDeviceSynchronize()); /* st does not wait for the legacy stream */
      gs_kstatus s = run_ours(p, A, B, C, D, p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, st);
      CK(cudaStreamSynchronize(st));
      double e = s == GS_K_OK ? rel_err(p, D, p.ldc, ref, nsamp, dsums) : NAN;
      fill_nan(D, p.c_elems());
      run_cublas(h, p, A, B, D, 1.f, 0.f);
      CK(cudaDeviceSynchronize());
      double ec = rel_err(p, D, p.ldc, ref, nsamp, dsums);
      int ok = s == GS_K_OK && e <= 1.5 * ec;
      if (!ok) ++fails;
      printf("selftest big %s m=%lld n=%lld k=%lld (%s over 2 GiB: %.2f GiB): err %.3e (cublas "
             "%.3e) %s\n",
             layout_name(p.ta, p.tb), (long long)b.m, (long long)b.n, (long long)b.k, b.what,
             std::max(std::max(p.a_elems(), p.b_elems()), p.c_elems()) * (double)es / (1 << 30),
             e, ec, ok ? "ok" : "FAIL");
      fflush(stdout);
      cudaFree(A);
      cudaFree(B);
      cudaFree(C);
      cudaFree(D);
      cudaFree(ref);
    }
  }

  /* Refusals: outside the class nothing is launched. */
  {
    bf16 *X;
    CK(cudaMalloc(&X, 1 << 20));
    struct Bad {
      int64_t m, n, k, lda;
      int ta, tb, off;
      const char *why;
      int64_t ldb = 0; /* 0: make_problem's */
    };
    std::vector<Bad> bads = {{128, 256, 64, 64, 1, 1, 0, "layout TT"},
                             {192, 256, 64, 64, 1, 0, 0, "m % 128"},
                             {128, 128, 64, 64, 1, 0, 0, "n % 256"},
                             {128, 256, 96, 96, 1, 0, 0, "k % 64"},
                             {128, 256, 64, 68, 1, 0, 0, "lda % 8"},
                             {128, 256, 64, 64, 1, 0, 4, "A misaligned"},
                             {128, 256, 128, 64, 1, 0, 0, "lda < k"}};
    if (!lay_ok[1]) bads.push_back({128, 256, 64, 128, 0, 0, 0, "layout NN"});
    if (!lay_ok[2]) bads.push_back({128, 256, 64, 128, 0, 1, 0, "layout NT"});
    if (lay_ok[1]) {
      bads.push_back({256, 256, 64, 128, 0, 0, 0, "NN lda < m"});
      bads.push_back({128, 256, 64, 132, 0, 0, 0, "NN lda % 8"});
      bads.push_back({128, 256, 96, 128, 0, 0, 0, "NN k % 64"});
      bads.push_back({128, 128, 64, 128, 0, 0, 0, "NN n % 256"});
    }
    if (lay_ok[2]) {
      Bad b1 = {128, 512, 64, 128, 0, 1, 0, "NT ldb < n"};
      b1.ldb = 256;
      bads.push_back(b1);
      Bad b2 = {128, 256, 64, 128, 0, 1, 0, "NT ldb % 8"};
      b2.ldb = 260;
      bads.push_back(b2);
      bads.push_back({128, 256, 64, 128, 0, 1, 4, "NT A misaligned"});
      bads.push_back({192, 256, 64, 192, 0, 1, 0, "NT m % 128"});
    }
    for (const Bad &b : bads) {
      ++cases;
      Problem p = make_problem(b.m, b.n, b.k, b.ta, b.tb);
      p.lda = b.lda;
      if (b.ldb) p.ldb = b.ldb;
      gs_kstatus s =
          run_ours(p, X + b.off, X, X, X, p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, st);
      int sup = gs_gemm_bf16_wgmma_supports(p.m, p.n, p.k, p.ta, p.tb, X + b.off, p.lda, X, p.ldb,
                                            X, p.ldc, 0);
      int ok = s == GS_K_UNSUPPORTED && !sup;
      if (!ok) ++fails;
      printf("selftest refuse %s: %s\n", b.why, ok ? "ok" : "FAIL");
    }
    CK(cudaStreamSynchronize(st));
    cudaFree(X);
  }

  printf("selftest: %d passed, %d failed\n", cases - fails, fails);
  cudaFree(dscal);
  cudaFree(dsums);
  cudaStreamDestroy(st);
  return fails;
}

/* ----------------------------------------------------- selftest, 3xTF32 */
/* 1 if the linked f32_3xtf32 kernel handles layout (ta, tb) at all (a
 * minimal, aligned problem with tight leading dims). */
static int x3_layout_supported(int ta, int tb) {
  Problem p = make_problem(128, 128, 32, ta, tb);
  return gs_gemm_f32_3xtf32_supports(p.m, p.n, p.k, ta, tb, (void *)256, p.lda, (void *)256,
                                     p.ldb, (void *)256, p.ldc, 0);
}

/* The f32_3xtf32 contract battery, run for each of the layouts TN, NN, NT
 * and TT that the linked kernel supports (the default build: TN only; with
 * -DGS_3XTF32_LAYOUTS=1 all four); the unsupported ones must be refused.
 * The graph-capture case is TN. Each finite-data case is checked against
 * the FP64 reference and against cuBLAS SGEMM's own error on the same
 * problem: ours must be within 2x of it (a correctness gate that catches a
 * lost part or a broken layout by orders of magnitude; issue 6's accuracy
 * targets are judged by the sweep), and every
 * element of D must be written and finite, with the same bits on a rerun.
 * Bias cases are judged against cuBLAS's error without the bias (SGEMM has
 * none). Data near FLT_MIN is reported, not judged (printed against a
 * TF32-level 2^-9): there the split keeps TF32 precision only
 * (tf32_split.h), and the tensor cores' subnormal handling is to be
 * measured.
 * Non-finite inputs: the Inf/NaN pattern of D must equal SGEMM's exactly,
 * and the finite elements must agree with SGEMM's to 1e-5. */
static const char *x3_dist_name(int dist) {
  static const char *names[] = {"randn", "wide", "A~FLT_MAX,B~2^-100", "A,B~2^60",
                                "A,B~2^-63", "A~FLT_MIN,B~2^100"};
  return dist >= 0 && dist < 6 ? names[dist] : "?";
}
/* 0 finite, 1 +Inf, 2 -Inf, 3 NaN */
static int fclass(float x) { return isnan(x) ? 3 : isinf(x) ? (x > 0 ? 1 : 2) : 0; }

static void poke(float *dev, int64_t idx, float v) {
  CK(cudaMemcpy(dev + idx, &v, sizeof v, cudaMemcpyHostToDevice));
}
static void poke_bits(float *dev, int64_t idx, uint32_t u) {
  float v;
  memcpy(&v, &u, sizeof v);
  poke(dev, idx, v);
}

static int selftest_3xtf32(cublasHandle_t h) {
  int fails = 0, cases = 0;
  float *dscal;
  double *dsums;
  CK(cudaMalloc(&dscal, 2 * sizeof(float)));
  CK(cudaMalloc(&dsums, 2 * sizeof(double)));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const size_t es = sizeof(float);

  /* Graph capture first, so that the launcher's very first call in the
   * process (driver entry point lookup, smem attribute) happens while a
   * stream captures in global mode: two launches with different operands,
   * replayed twice, both results checked. */
  {
    ++cases;
    Problem p = make_problem(512, 768, 320, 1, 0);
    float *A[2], *Bm[2], *D[2], *Dc;
    double *ref[2];
    const int64_t nsamp = 256;
    for (int i = 0; i < 2; ++i) {
      CK(cudaMalloc(&A[i], p.a_elems() * es));
      CK(cudaMalloc(&Bm[i], p.b_elems() * es));
      CK(cudaMalloc(&D[i], p.c_elems() * es));
      CK(cudaMalloc(&ref[i], p.m * nsamp * 8));
      fill_randn(A[i], p.a_elems(), 401 + i);
      fill_randn(Bm[i], p.b_elems(), 403 + i);
      reference<float>(p, A[i], Bm[i], (const float *)nullptr, nullptr, 1.0, 0.0, nsamp, ref[i]);
    }
    CK(cudaMalloc(&Dc, p.c_elems() * es));
    CK(cudaDeviceSynchronize());
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    gs_kstatus s0 = GS_K_LAUNCH_FAILED, s1 = GS_K_LAUNCH_FAILED;
    cudaError_t ce = cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal);
    if (ce == cudaSuccess) {
      s0 = run_ours(p, A[0], Bm[0], nullptr, D[0], p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, st);
      s1 = run_ours(p, A[1], Bm[1], nullptr, D[1], p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, st);
      ce = cudaStreamEndCapture(st, &g);
    }
    if (ce == cudaSuccess) ce = cudaGraphInstantiate(&ge, g, 0);
    double e[2] = {NAN, NAN}, ec[2] = {NAN, NAN};
    int ok = ce == cudaSuccess && s0 == GS_K_OK && s1 == GS_K_OK;
    for (int rep = 0; rep < 2 && ok; ++rep) {
      fill_nan(D[0], p.c_elems());
      fill_nan(D[1], p.c_elems());
      CK(cudaDeviceSynchronize());
      CK(cudaGraphLaunch(ge, st));
      CK(cudaStreamSynchronize(st));
      for (int i = 0; i < 2; ++i) {
        e[i] = rel_err(p, D[i], p.ldc, ref[i], nsamp, dsums);
        run_cublas(h, p, A[i], Bm[i], Dc, 1.f, 0.f);
        CK(cudaDeviceSynchronize());
        ec[i] = rel_err(p, Dc, p.ldc, ref[i], nsamp, dsums);
        if (!(e[i] <= 2.0 * ec[i])) ok = 0;
      }
    }
    if (!ok) ++fails;
    printf("selftest TN m=%lld n=%lld k=%lld graph capture (first launch of the process, global "
           "mode, 2 launches, 2 replays): capture %s, status %d/%d, err %.3e/%.3e (cublas "
           "%.3e/%.3e) %s\n",
           (long long)p.m, (long long)p.n, (long long)p.k, cudaGetErrorString(ce), (int)s0,
           (int)s1, e[0], e[1], ec[0], ec[1], ok ? "ok" : "FAIL");
    fflush(stdout);
    cudaGetLastError();
    if (ge) cudaGraphExecDestroy(ge);
    if (g) cudaGraphDestroy(g);
    for (int i = 0; i < 2; ++i) {
      cudaFree(A[i]);
      cudaFree(Bm[i]);
      cudaFree(D[i]);
      cudaFree(ref[i]);
    }
    cudaFree(Dc);
  }

  struct Case {
    int64_t m, n, k, pad;
    float alpha, beta;
    int dev_scalars, bias, alias, dist;
    const char *what;
    int ta = 1, tb = 0; /* TN unless set below */
  };
  std::vector<Case> list;
  const float ab[3][2] = {{1.f, 0.f}, {-0.5f, 1.f}, {2.f, 0.3f}};
  for (int v = 0; v < 3; ++v)
    for (int dev = 0; dev < 2; ++dev)
      for (int bias = 0; bias < 2; ++bias)
        list.push_back({1536, 1024, 544, 0, ab[v][0], ab[v][1], dev, bias, 0, 0,
                        "alpha/beta, 17 K-steps (last chunk short)"});
  list.push_back({1280, 1536, 1024, 36, 1.f, 0.f, 0, 0, 0, 0, "sub-views"});
  list.push_back({1280, 1536, 1024, 4, 0.7f, 0.3f, 1, 1, 0, 0, "sub-views, all on"});
  list.push_back({2048, 1024, 256, 0, 1.f, 1.f, 0, 0, 1, 0, "D aliases C"});
  list.push_back({2048, 1024, 256, 4, -2.f, 0.5f, 1, 1, 1, 0, "aliasing + views"});
  list.push_back({128, 128, 32, 0, 1.f, 0.f, 0, 0, 0, 0, "smallest: one tile, one K-step"});
  list.push_back({1024, 768, 32, 0, 1.f, 0.5f, 0, 1, 0, 0, "one K-step, beta, bias"});
  list.push_back({256, 512, 64, 0, 1.f, 0.f, 0, 0, 0, 0, "one chunk"});
  list.push_back({256, 512, 96, 0, 1.f, 0.f, 0, 0, 0, 0, "3 K-steps: fewer than the TMA stages"});
  list.push_back({384, 512, 160, 0, 1.f, 0.f, 0, 0, 0, 0, "5 K-steps: TMA stages + 1"});
  list.push_back({512, 384, 224, 0, 1.f, 0.f, 0, 0, 0, 0, "7 K-steps: part ring wraps twice"});
  list.push_back({512, 512, 1024, 0, 1.f, 0.f, 0, 0, 0, 2, "near FLT_MAX"});
  list.push_back({512, 512, 256, 0, 1.f, 0.f, 0, 0, 0, 3, "results near 2^124"});
  list.push_back({512, 512, 1024, 0, 1.f, 0.f, 0, 0, 0, 4, "products near FLT_MIN (info)"});
  list.push_back({512, 512, 1024, 0, 1.f, 0.f, 0, 0, 0, 5, "inputs near FLT_MIN (info)"});
  /* GS_SELFTEST_QUICK=1 (for compute-sanitizer runs): the small cases only. */
  const char *qenv = getenv("GS_SELFTEST_QUICK");
  const bool quick = qenv && *qenv && strcmp(qenv, "0") != 0;
  if (!quick) {
    list.push_back({1024, 768, 8192, 0, 1.f, 0.f, 0, 0, 0, 0, "large k"});
    list.push_back({512, 512, 16384, 4, 1.f, 0.3f, 1, 1, 0, 0, "large k, all on"});
    list.push_back({2560, 2048, 1024, 0, 1.f, 0.f, 0, 0, 0, 0, "grid of 320 tiles"});
    list.push_back({1024, 1024, 4096, 0, 1.f, 0.f, 0, 0, 0, 1, "wide dynamic range"});
  } else {
    /* one alpha/beta case per scalar mode, with and without bias */
    std::vector<Case> keep;
    for (size_t i = 0; i < list.size(); ++i)
      if (i < 12 ? (i % 3 == 0) : true) keep.push_back(list[i]);
    list.swap(keep);
  }
  /* The battery above (TN) once per supported layout. */
  const int lays[4][2] = {{1, 0}, {0, 0}, {0, 1}, {1, 1}}; /* TN, NN, NT, TT */
  int lay_ok[4], lay_run[4];
  for (int l = 0; l < 4; ++l) lay_ok[l] = x3_layout_supported(lays[l][0], lays[l][1]);
  /* GS_SELFTEST_LAYOUT=NN (or a list such as NN,TT): the battery, the
   * non-finite and the big cases for those layouts only (one layout per
   * run on the device, so a trap in one does not hide the others); the
   * refusals are checked in full either way. */
  const char *lenv = getenv("GS_SELFTEST_LAYOUT");
  for (int l = 0; l < 4; ++l)
    lay_run[l] = lay_ok[l] &&
                 (!lenv || !*lenv || strstr(lenv, layout_name(lays[l][0], lays[l][1])) != nullptr);
  repeat_per_layout(list, lays, lay_run);

  for (const Case &c : list) {
    ++cases;
    Problem p = make_problem(c.m, c.n, c.k, c.ta, c.tb, c.pad);
    float *A, *B, *C, *C0, *D, *Dc, *bias = nullptr;
    double *ref, *ref_nb = nullptr;
    int64_t nsamp = std::min<int64_t>(p.n, 256);
    CK(cudaMalloc(&A, p.a_elems() * es));
    CK(cudaMalloc(&B, p.b_elems() * es));
    CK(cudaMalloc(&C, p.c_elems() * es));
    CK(cudaMalloc(&C0, p.c_elems() * es));
    CK(cudaMalloc(&D, p.c_elems() * es));
    CK(cudaMalloc(&Dc, p.c_elems() * es));
    CK(cudaMalloc(&ref, p.m * nsamp * 8));
    fill_dist(A, p.a_elems(), 611 + cases, c.dist, 0);
    fill_dist(B, p.b_elems(), 612 + cases, c.dist, 1);
    if (c.beta != 0.f)
      fill_randn(C, p.c_elems(), 613 + cases);
    else
      fill_nan(C, p.c_elems());
    if (c.bias) {
      CK(cudaMalloc(&bias, p.m * es));
      fill_randn(bias, p.m, 614 + cases);
      CK(cudaMalloc(&ref_nb, p.m * nsamp * 8));
    }
    CK(cudaMemcpy(C0, C, p.c_elems() * es, cudaMemcpyDeviceToDevice));
    fill_nan(D, p.c_elems());
    reference<float>(p, A, B, C0, bias, c.alpha, c.beta, nsamp, ref);
    if (c.bias) reference<float>(p, A, B, C0, nullptr, c.alpha, c.beta, nsamp, ref_nb);
    float hs[2] = {c.alpha, c.beta};
    CK(cudaMemcpy(dscal, hs, sizeof hs, cudaMemcpyHostToDevice));
    /* device scalars: garbage host values, so reading them would show */
    float ha = c.dev_scalars ? 1234.f : c.alpha, hb = c.dev_scalars ? 77.f : c.beta;
    float *out = c.alias ? C : D;
    CK(cudaDeviceSynchronize());
    gs_kstatus s = run_ours(p, A, B, C, out, p.ldc, ha, hb, bias,
                            c.dev_scalars ? dscal : nullptr, c.dev_scalars ? dscal + 1 : nullptr,
                            st);
    CK(cudaStreamSynchronize(st));
    CKL();
    double e = s == GS_K_OK ? rel_err(p, out, p.ldc, ref, nsamp, dsums) : NAN;
    /* every element written and finite (the error samples columns; this
     * checks all), and the same bits on a rerun */
    int64_t nonfinite = 0;
    int same = 1;
    if (s == GS_K_OK) {
      std::vector<float> h1(p.c_elems()), h2;
      CK(cudaMemcpy(h1.data(), out, p.c_elems() * es, cudaMemcpyDeviceToHost));
      for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i)
          if (!std::isfinite(h1[j * p.ldc + i])) ++nonfinite;
      if (!c.alias) {
        fill_nan(Dc, p.c_elems());
        CK(cudaDeviceSynchronize());
        run_ours(p, A, B, C, Dc, p.ldc, ha, hb, bias, c.dev_scalars ? dscal : nullptr,
                 c.dev_scalars ? dscal + 1 : nullptr, st);
        CK(cudaStreamSynchronize(st));
        h2.resize(p.c_elems());
        CK(cudaMemcpy(h2.data(), Dc, p.c_elems() * es, cudaMemcpyDeviceToHost));
        for (int64_t j = 0; j < p.n && same; ++j)
          same = memcmp(&h1[j * p.ldc], &h2[j * p.ldc], p.m * es) == 0;
      }
    }
    /* cuBLAS SGEMM's own error on the same problem (without the bias) */
    CK(cudaMemcpy(Dc, C0, p.c_elems() * es, cudaMemcpyDeviceToDevice));
    run_cublas(h, p, A, B, Dc, c.alpha, c.beta);
    CK(cudaDeviceSynchronize());
    double ec = rel_err(p, Dc, p.ldc, c.bias ? ref_nb : ref, nsamp, dsums);
    /* Near FLT_MIN the error is reported (against a TF32-level 2^-9), not
     * judged; NaN/Inf/unwritten elements or unstable bits still fail. */
    const bool info = c.dist >= 4;
    /* Wide-range data (dist 1): SGEMM's error there depends on the data
     * (1e-8..1e-7) while the kernel has a floor of its own there, mostly
     * from its tensor-core chunk accumulation (3e-8..1.7e-7 over 56 shapes
     * and four layouts; gemm_f32_3xtf32.NOTES.md, next step 1), so the
     * ratio swings 0.9-8x with the draw. The check is for mistakes (a lost
     * correction term costs ~1e-4, an index mistake ~1): 2x SGEMM's error
     * or 2^-21, whichever is larger. The accuracy target is the sweep's. */
    const double tol = info ? 0x1p-9 : c.dist == 1 ? fmax(2.0 * ec, 0x1p-21) : 2.0 * ec;
    const bool in_tol = e <= tol;
    int ok = s == GS_K_OK && (info || in_tol) && same && nonfinite == 0;
    if (!ok) ++fails;
    printf("selftest %s m=%lld n=%lld k=%lld pad=%lld alpha=%g beta=%g %s%s%s[%s] (%s): err %.3e "
           "(cublas %.3e%s, ratio %.3f) %s%s%s\n",
           layout_name(c.ta, c.tb), (long long)c.m, (long long)c.n, (long long)c.k,
           (long long)c.pad, c.alpha, c.beta,
           c.dev_scalars ? "devscal " : "", c.bias ? "bias " : "", c.alias ? "alias " : "",
           x3_dist_name(c.dist), c.what, e, ec, c.bias ? ", no bias" : "", e / ec,
           ok ? (info ? (in_tol ? "ok (info: within 2^-9)" : "info: ABOVE 2^-9, see NOTES") : "ok")
              : "FAIL",
           same ? "" : " (bits differ on rerun)", nonfinite ? " (NaN/Inf/unwritten elements)" : "");
    fflush(stdout);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(C0);
    cudaFree(D);
    cudaFree(Dc);
    cudaFree(ref);
    if (bias) cudaFree(bias);
    if (ref_nb) cudaFree(ref_nb);
  }

  /* Non-finite inputs: the pattern of Inf/NaN in D must be SGEMM's. */
  {
    struct NF {
      float alpha, beta;
      int overflow;
      const char *what;
    } nfs[] = {{1.f, 0.f, 0, "Inf/NaN in A and B, beta 0 over NaN C"},
               {1.f, 1.f, 0, "Inf/NaN in A, B and C, beta 1"},
               {1.f, 0.f, 1, "finite products beyond FLT_MAX (2^100 * 2^100)"}};
    for (int l = 0; l < 4; ++l)
    for (const NF &nf : nfs) {
      if (!lay_run[l]) continue;
      ++cases;
      Problem p = make_problem(256, 384, 512, lays[l][0], lays[l][1]);
      float *A, *B, *C, *D, *Dc;
      CK(cudaMalloc(&A, p.a_elems() * es));
      CK(cudaMalloc(&B, p.b_elems() * es));
      CK(cudaMalloc(&C, p.c_elems() * es));
      CK(cudaMalloc(&D, p.c_elems() * es));
      CK(cudaMalloc(&Dc, p.c_elems() * es));
      fill_randn(A, p.a_elems(), 701);
      fill_randn(B, p.b_elems(), 702);
      if (nf.beta != 0.f)
        fill_randn(C, p.c_elems(), 703);
      else
        fill_nan(C, p.c_elems());
      CK(cudaDeviceSynchronize());
      /* A(i, kk) is A[kk + i*lda] (stored k x m) or A[i + kk*lda] (m x k),
       * B(kk, j) is B[kk + j*ldb] (stored k x n) or B[j + kk*ldb] (n x k) */
      auto a_at = [&](int64_t i, int64_t kk) { return p.ta ? kk + i * p.lda : i + kk * p.lda; };
      auto b_at = [&](int64_t kk, int64_t j) { return p.tb ? j + kk * p.ldb : kk + j * p.ldb; };
      if (!nf.overflow) {
        poke(A, a_at(3, 5), INFINITY);          /* row 3: +-Inf ... */
        poke(B, b_at(5, 7), 0.f);               /* ... and Inf * 0 = NaN at (3, 7) */
        poke(A, a_at(10, 20), -INFINITY);       /* row 10: -Inf*B(20,j) + Inf*B(21,j): */
        poke(A, a_at(10, 21), INFINITY);        /*   NaN or +-Inf by the signs */
        poke(A, a_at(30, 40), NAN);             /* row 30 NaN */
        poke_bits(A, a_at(80, 90), 0x7f800001u); /* NaN with a low-bits-only payload */
        poke(B, b_at(60, 100), INFINITY);       /* column 100 +-Inf */
        poke(B, b_at(61, 101), NAN);            /* column 101 NaN */
        poke(A, a_at(50, 70), INFINITY);        /* Inf * -Inf at (50, 120) */
        poke(B, b_at(70, 120), -INFINITY);
        poke(A, a_at(200, 511), -INFINITY);     /* in the last K-step */
        if (nf.beta != 0.f) {
          poke(C, 5 + 5 * p.ldc, -INFINITY);
          poke(C, 6 + 6 * p.ldc, NAN);
          poke(C, 3 + 7 * p.ldc, INFINITY);     /* + the NaN at (3, 7) */
        }
      } else {
        poke(A, a_at(100, 200), 0x1p100f);
        poke(B, b_at(200, 200), 0x1p100f);      /* +Inf at (100, 200) */
        poke(A, a_at(101, 300), -0x1p100f);
        poke(B, b_at(300, 201), 0x1p100f);      /* -Inf at (101, 201) */
      }
      fill_nan(D, p.c_elems());
      CK(cudaDeviceSynchronize());
      gs_kstatus s =
          run_ours(p, A, B, C, D, p.ldc, nf.alpha, nf.beta, nullptr, nullptr, nullptr, st);
      CK(cudaStreamSynchronize(st));
      CK(cudaMemcpy(Dc, C, p.c_elems() * es, cudaMemcpyDeviceToDevice));
      run_cublas(h, p, A, B, Dc, nf.alpha, nf.beta);
      CK(cudaDeviceSynchronize());
      std::vector<float> ho(p.c_elems()), hc(p.c_elems());
      CK(cudaMemcpy(ho.data(), D, p.c_elems() * es, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hc.data(), Dc, p.c_elems() * es, cudaMemcpyDeviceToHost));
      int64_t mismatch = 0, nonfin = 0, first_i = -1, first_j = -1;
      double num = 0, den = 0;
      for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) {
          const float o = ho[j * p.ldc + i], r = hc[j * p.ldc + i];
          const int co = fclass(o), cr = fclass(r);
          if (cr) ++nonfin;
          if (co != cr) {
            if (!mismatch) first_i = i, first_j = j;
            ++mismatch;
          } else if (!co) {
            num += ((double)o - r) * ((double)o - r);
            den += (double)r * r;
          }
        }
      const double dfin = den > 0 ? sqrt(num / den) : 0;
      const int ok = s == GS_K_OK && mismatch == 0 && nonfin > 0 && dfin <= 1e-5;
      if (!ok) ++fails;
      printf("selftest %s m=%lld n=%lld k=%lld non-finite (%s): %lld non-finite in SGEMM's D, "
             "%lld class mismatches",
             layout_name(p.ta, p.tb), (long long)p.m, (long long)p.n, (long long)p.k, nf.what,
             (long long)nonfin, (long long)mismatch);
      if (mismatch)
        printf(" (first at row %lld col %lld: ours %g, SGEMM %g)", (long long)first_i,
               (long long)first_j, ho[first_j * p.ldc + first_i], hc[first_j * p.ldc + first_i]);
      printf(", finite part vs SGEMM %.2e: %s\n", dfin, ok ? "ok" : "FAIL");
      fflush(stdout);
      cudaFree(A);
      cudaFree(B);
      cudaFree(C);
      cudaFree(D);
      cudaFree(Dc);
    }
  }

  /* Over 2^31 bytes: A, then B, then D (64-bit addressing: TMA and epilogue). */
  if (!quick) {
    struct Big {
      int64_t m, n, k;
      const char *what;
    } bigs[] = {{65536, 128, 8224, "A"}, {128, 65536, 8224, "B"}, {32768, 16512, 32, "D"}};
    for (int l = 0; l < 4; ++l)
    for (const Big &b : bigs) {
      if (!lay_run[l]) continue;
      ++cases;
      Problem p = make_problem(b.m, b.n, b.k, lays[l][0], lays[l][1]);
      float *A, *B, *C, *D;
      double *ref;
      int64_t nsamp = std::min<int64_t>(p.n, 64);
      CK(cudaMalloc(&A, p.a_elems() * es));
      CK(cudaMalloc(&B, p.b_elems() * es));
      CK(cudaMalloc(&C, p.c_elems() * es));
      CK(cudaMalloc(&D, p.c_elems() * es));
      CK(cudaMalloc(&ref, p.m * nsamp * 8));
      fill_randn(A, p.a_elems(), 801);
      fill_randn(B, p.b_elems(), 802);
      fill_nan(C, p.c_elems());
      fill_nan(D, p.c_elems());
      reference<float>(p, A, B, C, nullptr, 1.0, 0.0, nsamp, ref);
      CK(cudaDeviceSynchronize()); /* st does not wait for the legacy stream */
      gs_kstatus s = run_ours(p, A, B, C, D, p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, st);
      CK(cudaStreamSynchronize(st));
      double e = s == GS_K_OK ? rel_err(p, D, p.ldc, ref, nsamp, dsums) : NAN;
      fill_nan(D, p.c_elems());
      run_cublas(h, p, A, B, D, 1.f, 0.f);
      CK(cudaDeviceSynchronize());
      double ec = rel_err(p, D, p.ldc, ref, nsamp, dsums);
      int ok = s == GS_K_OK && e <= 2.0 * ec;
      if (!ok) ++fails;
      printf("selftest big %s m=%lld n=%lld k=%lld (%s over 2 GiB: %.2f GiB): err %.3e (cublas "
             "%.3e) %s\n",
             layout_name(p.ta, p.tb), (long long)b.m, (long long)b.n, (long long)b.k, b.what,
             std::max(std::max(p.a_elems(), p.b_elems()), p.c_elems()) * (double)es / (1 << 30),
             e, ec, ok ? "ok" : "FAIL");
      fflush(stdout);
      cudaFree(A);
      cudaFree(B);
      cudaFree(C);
      cudaFree(D);
      cudaFree(ref);
    }
  }

  /* Refusals: outside the class nothing is launched. */
  {
    float *X;
    CK(cudaMalloc(&X, 1 << 20));
    struct Bad {
      int64_t m, n, k, lda;
      int ta, tb, off;
      const char *why;
      int64_t ldb = 0; /* 0: make_problem's */
    };
    std::vector<Bad> bads;
    /* the layouts the linked kernel does not support: refused */
    if (!lay_ok[1]) bads.push_back({128, 128, 32, 32, 0, 0, 0, "layout NN"});
    if (!lay_ok[2]) bads.push_back({128, 128, 32, 32, 0, 1, 0, "layout NT"});
    if (!lay_ok[3]) bads.push_back({128, 128, 32, 32, 1, 1, 0, "layout TT"});
    const Bad tn_bads[] = {{192, 128, 32, 32, 1, 0, 0, "m % 128"},
                           {128, 192, 32, 32, 1, 0, 0, "n % 128"},
                           {128, 128, 48, 48, 1, 0, 0, "k % 32"},
                           {128, 128, 32, 34, 1, 0, 0, "lda % 4"},
                           {128, 128, 32, 32, 1, 0, 1, "A misaligned"},
                           {128, 128, 64, 32, 1, 0, 0, "lda < k"}};
    for (const Bad &b : tn_bads) bads.push_back(b);
    /* the supported other layouts: their leading-dimension rules */
    if (lay_ok[1]) {
      bads.push_back({256, 128, 32, 128, 0, 0, 0, "NN lda < m"});
      bads.push_back({128, 128, 32, 130, 0, 0, 0, "NN lda % 4"});
      bads.push_back({128, 128, 48, 128, 0, 0, 0, "NN k % 32"});
      Bad b = {128, 128, 64, 128, 0, 0, 0, "NN ldb < k"};
      b.ldb = 32;
      bads.push_back(b);
    }
    if (lay_ok[2]) {
      Bad b1 = {128, 256, 32, 128, 0, 1, 0, "NT ldb < n"};
      b1.ldb = 128;
      bads.push_back(b1);
      Bad b2 = {128, 128, 32, 128, 0, 1, 0, "NT ldb % 4"};
      b2.ldb = 130;
      bads.push_back(b2);
      bads.push_back({128, 128, 32, 128, 0, 1, 1, "NT A misaligned"});
      bads.push_back({192, 128, 32, 192, 0, 1, 0, "NT m % 128"});
    }
    if (lay_ok[3]) {
      bads.push_back({128, 128, 64, 32, 1, 1, 0, "TT lda < k"});
      Bad b = {128, 256, 32, 32, 1, 1, 0, "TT ldb < n"};
      b.ldb = 128;
      bads.push_back(b);
      bads.push_back({128, 192, 32, 32, 1, 1, 0, "TT n % 128"});
    }
    for (const Bad &b : bads) {
      ++cases;
      Problem p = make_problem(b.m, b.n, b.k, b.ta, b.tb);
      p.lda = b.lda;
      if (b.ldb) p.ldb = b.ldb;
      gs_kstatus s =
          run_ours(p, X + b.off, X, X, X, p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, st);
      int sup = gs_gemm_f32_3xtf32_supports(p.m, p.n, p.k, p.ta, p.tb, X + b.off, p.lda, X, p.ldb,
                                            X, p.ldc, 0);
      int ok = s == GS_K_UNSUPPORTED && !sup;
      if (!ok) ++fails;
      printf("selftest refuse %s: %s\n", b.why, ok ? "ok" : "FAIL");
    }
    CK(cudaStreamSynchronize(st));
    cudaFree(X);
  }

  printf("selftest: %d passed, %d failed\n", cases - fails, fails);
  cudaFree(dscal);
  cudaFree(dsums);
  cudaStreamDestroy(st);
  return fails;
}

/* ------------------------------------------------------------- benchmark */
struct Row {
  int64_t m, n, k;
  std::string layout;
  double ours_tf, cub_tf, ratio, ours_err, cub_err, ours_us, cub_us;
  int mhz, watts, samples, reps, nsets;
  bool supported;
  double ours_err_wide, cub_err_wide; /* K::wide kernels only (else NaN) */
};

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <class K>
static bool bench_shape(cublasHandle_t h, int64_t m, int64_t n, int64_t k, int ta, int tb,
                        int iters, int warmup, Row &row) {
  typedef typename K::T T;
  const size_t es = sizeof(T);
  Problem p = make_problem(m, n, k, ta, tb);
  row = Row();
  row.m = m;
  row.n = n;
  row.k = k;
  row.layout = layout_name(ta, tb);
  row.supported = K::supports(p);

  const double set_bytes = (double)(p.a_elems() + p.b_elems() + p.c_elems()) * es;
  const double target = 3.0 * 60e6 * 1.2; /* > 3x L2 */
  int nsets = (int)std::min(64.0, std::max(1.0, ceil(target / set_bytes)));
  /* bound memory: at most ~24 GB of rotating sets */
  while (nsets > 1 && nsets * set_bytes > 24e9) --nsets;
  row.nsets = nsets;

  std::vector<T *> A(nsets), B(nsets), C(nsets);
  for (int s = 0; s < nsets; ++s) {
    CK(cudaMalloc(&A[s], p.a_elems() * es));
    CK(cudaMalloc(&B[s], p.b_elems() * es));
    CK(cudaMalloc(&C[s], p.c_elems() * es));
    K::fill(A[s], p.a_elems(), 1000 + 3 * s);
    K::fill(B[s], p.b_elems(), 1001 + 3 * s);
    K::fill(C[s], p.c_elems(), 1002 + 3 * s);
  }
  T *Do, *Dc;
  double *ref, *dsums;
  int64_t nsamp = std::min<int64_t>(n, 256);
  CK(cudaMalloc(&Do, p.c_elems() * es));
  CK(cudaMalloc(&Dc, p.c_elems() * es));
  CK(cudaMalloc(&ref, m * nsamp * 8));
  CK(cudaMalloc(&dsums, 16));

  /* correctness first: set 0, C and outputs poisoned, beta = 0 */
  fill_nan(C[0], p.c_elems());
  fill_nan(Do, p.c_elems());
  fill_nan(Dc, p.c_elems());
  reference<T>(p, A[0], B[0], C[0], nullptr, 1.0, 0.0, nsamp, ref);
  run_cublas(h, p, A[0], B[0], Dc, 1.f, 0.f);
  CK(cudaDeviceSynchronize());
  row.cub_err = rel_err(p, Dc, p.ldc, ref, nsamp, dsums);
  row.ours_err = NAN;
  if (row.supported) {
    gs_kstatus s = run_ours(p, A[0], B[0], C[0], Do, p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, 0);
    if (s != GS_K_OK) {
      fprintf(stderr, "launch status %d for %lldx%lldx%lld %s\n", (int)s, (long long)m,
              (long long)n, (long long)k, row.layout.c_str());
      exit(2);
    }
    CK(cudaDeviceSynchronize());
    row.ours_err = rel_err(p, Do, p.ldc, ref, nsamp, dsums);
  }
  row.ours_err_wide = row.cub_err_wide = NAN;
  if constexpr (K::wide) {
    /* the same on wide-dynamic-range data (set 0 refilled, restored after) */
    fill_wide(A[0], p.a_elems(), 5000);
    fill_wide(B[0], p.b_elems(), 5001);
    fill_nan(Do, p.c_elems());
    fill_nan(Dc, p.c_elems());
    reference<T>(p, A[0], B[0], C[0], nullptr, 1.0, 0.0, nsamp, ref);
    run_cublas(h, p, A[0], B[0], Dc, 1.f, 0.f);
    CK(cudaDeviceSynchronize());
    row.cub_err_wide = rel_err(p, Dc, p.ldc, ref, nsamp, dsums);
    if (row.supported) {
      if (run_ours(p, A[0], B[0], C[0], Do, p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, 0) !=
          GS_K_OK) {
        fprintf(stderr, "launch failed (wide data)\n");
        exit(2);
      }
      CK(cudaDeviceSynchronize());
      row.ours_err_wide = rel_err(p, Do, p.ldc, ref, nsamp, dsums);
    }
    K::fill(A[0], p.a_elems(), 1000);
    K::fill(B[0], p.b_elems(), 1001);
    CK(cudaDeviceSynchronize());
  }

  /* timing */
  long call_idx[2] = {0, 0};
  auto call = [&](int which) {
    int s = (int)(call_idx[which]++ % nsets);
    if (which == 0) {
      if (run_ours(p, A[s], B[s], C[s], C[s], p.ldc, 1.f, 0.f, nullptr, nullptr, nullptr, 0) !=
          GS_K_OK) {
        fprintf(stderr, "launch failed\n");
        exit(2);
      }
    } else {
      run_cublas(h, p, A[s], B[s], C[s], 1.f, 0.f);
    }
  };
  const int nw = row.supported ? 2 : 1;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  double est[2] = {0, 0};
  for (int w = 0; w < nw; ++w) {
    int which = row.supported ? w : 1;
    for (int i = 0; i < warmup; ++i) call(which);
    CK(cudaEventRecord(e0));
    for (int i = 0; i < 3; ++i) call(which);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    est[which] = ms / 3;
  }
  double t_est = std::max(est[0], est[1]);
  int reps = (int)std::min(50.0, std::max(1.0, ceil(1.0 / t_est)));
  row.reps = reps;
  row.samples = iters;
  std::vector<cudaEvent_t> ev(4 * iters);
  for (auto &e : ev) CK(cudaEventCreate(&e));
  for (int it = 0; it < iters; ++it)
    for (int q = 0; q < 2; ++q) {
      int which = (it % 2 == 0) ? q : 1 - q;
      if (which == 0 && !row.supported) continue;
      cudaEvent_t *pe = &ev[4 * it + 2 * which];
      CK(cudaEventRecord(pe[0]));
      for (int r = 0; r < reps; ++r) call(which);
      CK(cudaEventRecord(pe[1]));
    }
  /* read the clock while the samples run */
  std::vector<double> clocks, watts;
  while (cudaEventQuery(ev[4 * iters - 1]) == cudaErrorNotReady ||
         cudaEventQuery(ev[4 * iters - 3]) == cudaErrorNotReady) {
    int c = nvml.clock_mhz(), w = nvml.power_w();
    if (c > 0) clocks.push_back(c);
    if (w > 0) watts.push_back(w);
    usleep(2000);
  }
  CK(cudaDeviceSynchronize());
  CKL();
  std::vector<double> t[2];
  for (int it = 0; it < iters; ++it)
    for (int which = 0; which < 2; ++which) {
      if (which == 0 && !row.supported) continue;
      float ms;
      CK(cudaEventElapsedTime(&ms, ev[4 * it + 2 * which], ev[4 * it + 2 * which + 1]));
      t[which].push_back(ms / reps);
    }
  row.mhz = clocks.empty() ? probe_clock_mhz() : (int)median(clocks);
  row.watts = watts.empty() ? -1 : (int)median(watts);
  const double flop = 2.0 * m * n * k;
  row.cub_us = median(t[1]) * 1e3;
  row.cub_tf = flop / (row.cub_us * 1e-6) / 1e12;
  if (row.supported) {
    row.ours_us = median(t[0]) * 1e3;
    row.ours_tf = flop / (row.ours_us * 1e-6) / 1e12;
    row.ratio = row.ours_tf / row.cub_tf;
  } else {
    row.ours_us = row.ours_tf = row.ratio = NAN;
  }

  for (auto &e : ev) cudaEventDestroy(e);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  for (int s = 0; s < nsets; ++s) {
    cudaFree(A[s]);
    cudaFree(B[s]);
    cudaFree(C[s]);
  }
  cudaFree(Do);
  cudaFree(Dc);
  cudaFree(ref);
  cudaFree(dsums);
  bool wide_ok = true;
  if constexpr (K::wide) wide_ok = row.ours_err_wide <= K::tol_wide * row.cub_err_wide;
  return !row.supported || (row.ours_err <= K::tol * row.cub_err && wide_ok);
}

/* cuBLAS alone for about ms milliseconds (bf16 8192^3 GemmEx), so that the
 * sweep starts in the sustained power/clock state. */
static void preheat(cublasHandle_t h, int ms) {
  Problem p = make_problem(8192, 8192, 8192, 1, 0);
  bf16 *A, *B, *C;
  CK(cudaMalloc(&A, p.a_elems() * sizeof(bf16)));
  CK(cudaMalloc(&B, p.b_elems() * sizeof(bf16)));
  CK(cudaMalloc(&C, p.c_elems() * sizeof(bf16)));
  fill_rand(A, p.a_elems(), 7);
  fill_rand(B, p.b_elems(), 8);
  CK(cudaDeviceSynchronize());
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  double el = 0;
  int calls = 0;
  while (el < ms) {
    for (int i = 0; i < 20; ++i) run_cublas(h, p, A, B, C, 1.f, 0.f);
    calls += 20;
    CK(cudaDeviceSynchronize());
    clock_gettime(CLOCK_MONOTONIC, &t1);
    el = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
  }
  printf("# preheat: %d cuBLAS bf16 8192^3 calls in %.0f ms, SM clock now %d MHz, %d W\n", calls,
         el, nvml.clock_mhz(), nvml.power_w());
  fflush(stdout);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
}

static void usage() {
  fprintf(stderr,
          "usage: gemmshim-bench --kernel sgemm_simt|bf16_wgmma|f32_3xtf32 --shapes FILE\n"
          "                      [--csv OUT] [--iters N>=20] [--warmup N] [--preheat-ms MS]\n"
          "                      [--selftest] [--sm-target N (bf16_wgmma)]\n");
}

int main(int argc, char **argv) {
  const char *kernel = "sgemm_simt", *shapes = nullptr, *csv = nullptr;
  int iters = 20, warmup = 3, do_selftest = 0, preheat_ms = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char * {
      if (i + 1 >= argc) {
        usage();
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--kernel") kernel = next();
    else if (a == "--shapes") shapes = next();
    else if (a == "--csv") csv = next();
    else if (a == "--iters") iters = atoi(next());
    else if (a == "--warmup") warmup = atoi(next());
    else if (a == "--selftest") do_selftest = 1;
    else if (a == "--preheat-ms") preheat_ms = atoi(next());
    else if (a == "--sm-target") g_sm_target = atoi(next());
    else {
      usage();
      return 2;
    }
  }
  const bool bf16_mode = strcmp(kernel, "bf16_wgmma") == 0;
  const bool x3_mode = strcmp(kernel, "f32_3xtf32") == 0;
  if (strcmp(kernel, "sgemm_simt") != 0 && !bf16_mode && !x3_mode) {
    fprintf(stderr, "unknown kernel '%s' (known: sgemm_simt, bf16_wgmma, f32_3xtf32)\n", kernel);
    return 2;
  }
  if (x3_mode && (!gs_gemm_f32_3xtf32_launch || !gs_gemm_f32_3xtf32_supports)) {
    fprintf(stderr, "f32_3xtf32 is not linked into this build (link kernels/gemm_f32_3xtf32.o; "
                    "tools/build-bench-3xtf32.sh does)\n");
    return 2;
  }
  if (x3_mode) {
    g_f32_launch = gs_gemm_f32_3xtf32_launch;
    const char *ov = getenv("NVIDIA_TF32_OVERRIDE");
    if (ov)
      fprintf(stderr,
              "note: NVIDIA_TF32_OVERRIDE=%s is set (the FP32 reference must be plain FP32)\n",
              ov);
  }
  if (bf16_mode && (!gs_gemm_bf16_wgmma_launch || !gs_gemm_bf16_wgmma_supports)) {
    fprintf(stderr, "bf16_wgmma is not linked into this build (link kernels/gemm_bf16_wgmma.o; "
                    "tools/build-bench.sh does)\n");
    return 2;
  }
  if (g_sm_target < 0 || (g_sm_target > 0 && !bf16_mode)) {
    fprintf(stderr, "--sm-target takes N > 0 and only --kernel bf16_wgmma (the persistent build "
                    "honours it)\n");
    return 2;
  }
  if (iters < 1 || (!shapes && !do_selftest)) {
    usage();
    return 2;
  }

  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  nvml.open(dev);
  int drv = 0;
  CK(cudaDriverGetVersion(&drv));
  cublasHandle_t h;
  CKB(cublasCreate(&h));
  CKB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  if (g_sm_target) CKB(cublasSetSmCountTarget(h, g_sm_target));
  int cv[3];
  CKB(cublasGetProperty(MAJOR_VERSION, &cv[0]));
  CKB(cublasGetProperty(MINOR_VERSION, &cv[1]));
  CKB(cublasGetProperty(PATCH_LEVEL, &cv[2]));
  char date[64];
  time_t now = time(nullptr);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  char header[1024];
  snprintf(header, sizeof header,
           "# device: %s\n# sm_count: %d\n# driver: %s (CUDA driver API %d)\n"
           "# cublas: %d.%d.%d\n# date: %s\n# kernel: %s\n# sm_count_target: %d\n",
           prop.name, prop.multiProcessorCount, nvml.driver, drv, cv[0], cv[1], cv[2], date,
           kernel, g_sm_target);
  fputs(header, stdout);
  fflush(stdout);

  int bad = 0;
  if (do_selftest)
    bad += (bf16_mode ? selftest_bf16(h) : x3_mode ? selftest_3xtf32(h) : selftest(h)) ? 1 : 0;
  if (preheat_ms > 0 && shapes) preheat(h, preheat_ms);

  if (shapes) {
    FILE *f = fopen(shapes, "r");
    if (!f) {
      perror(shapes);
      return 2;
    }
    FILE *out = nullptr;
    if (csv) {
      out = fopen(csv, "w");
      if (!out) {
        perror(csv);
        return 2;
      }
      fputs(header, out);
      fprintf(out, "m,n,k,layout,ours_tflops,cublas_tflops,ratio,ours_err,cublas_err,sm_mhz,"
                   "power_w,ours_us,cublas_us,samples,reps,buffer_sets%s\n",
              x3_mode ? ",ours_err_wide,cublas_err_wide" : "");
    }
    if (x3_mode)
      printf("%-22s %-3s %9s %9s %7s | %-27s | %-27s | %6s %5s\n", "shape (m n k)", "lay",
             "ours TF/s", "cuBLAS", "ratio", "err vs FP64 randn: ours/cuBLAS",
             "wide: ours/cuBLAS (ratio)", "MHz", "W");
    else
      printf("%-22s %-3s %9s %9s %7s %10s %10s %6s %5s\n", "shape (m n k)", "lay", "ours TF/s",
             "cuBLAS", "ratio", "ours err", "cuBLAS err", "MHz", "W");
    char line[512];
    while (fgets(line, sizeof line, f)) {
      char *hash = strchr(line, '#');
      if (hash) *hash = 0;
      long long m, n, k;
      char lay[8];
      if (sscanf(line, "%lld %lld %lld %7s", &m, &n, &k, lay) != 4) continue;
      int ta = lay[0] == 'T' || lay[0] == 't', tb = lay[1] == 'T' || lay[1] == 't';
      Row r;
      bool ok = bf16_mode ? bench_shape<KernBF16>(h, m, n, k, ta, tb, iters, warmup, r)
                : x3_mode ? bench_shape<KernF32x3>(h, m, n, k, ta, tb, iters, warmup, r)
                          : bench_shape<KernF32>(h, m, n, k, ta, tb, iters, warmup, r);
      char shape[64];
      snprintf(shape, sizeof shape, "%lld %lld %lld", m, n, k);
      if (x3_mode)
        printf("%-22s %-3s %9.2f %9.2f %7.3f | %9.3e %9.3e (%5.3f) | %9.3e %9.3e (%5.3f) | %6d "
               "%5d%s\n",
               shape, r.layout.c_str(), r.ours_tf, r.cub_tf, r.ratio, r.ours_err, r.cub_err,
               r.ours_err / r.cub_err, r.ours_err_wide, r.cub_err_wide,
               r.ours_err_wide / r.cub_err_wide, r.mhz, r.watts,
               !r.supported ? "  (unsupported: cuBLAS only)"
                            : (ok ? "" : "  ** ERROR above target (0.5x randn, 1.0x wide) **"));
      else
        printf("%-22s %-3s %9.2f %9.2f %7.3f %10.3e %10.3e %6d %5d%s\n", shape, r.layout.c_str(),
               r.ours_tf, r.cub_tf, r.ratio, r.ours_err, r.cub_err, r.mhz, r.watts,
               !r.supported ? "  (unsupported: cuBLAS only)"
                            : (ok ? "" : bf16_mode ? "  ** ERROR > 1.5x cuBLAS vs FP64 **"
                                                   : "  ** ERROR > 2x cuBLAS vs FP64 **"));
      fflush(stdout);
      if (out) {
        fprintf(out, "%lld,%lld,%lld,%s,%.3f,%.3f,%.4f,%.4e,%.4e,%d,%d,%.2f,%.2f,%d,%d,%d", m,
                n, k, r.layout.c_str(), r.ours_tf, r.cub_tf, r.ratio, r.ours_err, r.cub_err,
                r.mhz, r.watts, r.ours_us, r.cub_us, r.samples, r.reps, r.nsets);
        if (x3_mode) fprintf(out, ",%.4e,%.4e", r.ours_err_wide, r.cub_err_wide);
        fputc('\n', out);
        fflush(out);
      }
      if (!ok) bad = 1;
    }
    fclose(f);
    if (out) fclose(out);
  }
  cublasDestroy(h);
  if (bad) printf("FAILED: see lines marked above\n");
  return bad ? 1 : 0;
}
