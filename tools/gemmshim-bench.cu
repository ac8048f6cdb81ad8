/* gemmshim-bench: one kernel of the library's kernel table beside cuBLAS,
 * same process, same data. It measures and checks nothing beyond its own
 * measurement (the contract battery is tests/gpu/check_kernels).
 *
 *   gemmshim-bench --list
 *   gemmshim-bench --kernel NAME --shapes FILE [--csv OUT] [--iters N]
 *                  [--warmup N] [--preheat-ms MS] [--sm-target N]
 *                  [--data uniform|randn|wide] [--roofline] [--after-producer]
 *
 * NAME is a name of the kernel table (dispatch/variants.h). All the bench
 * knows of a kernel comes from its entry: data type, class of calls,
 * launcher, whether it honours an SM-count target, accuracy bound; no code
 * here is specific to one kernel. Shape file: one "m n k layout [batch]"
 * per line (layout NN, TN, NT or TT: op(A) then op(B), as cuBLAS's
 * transa/transb; batch: the call is the strided-batched entry,
 * cublasGemmStridedBatchedEx or cublasSgemmStridedBatched, of that many
 * items, each matrix right after the one before, and its error is checked
 * on the first and the last item), '#' starts a comment.
 *
 * The cuBLAS reference, by the entry's data type: CUDA_R_32F: cublasSgemm
 * in CUBLAS_DEFAULT_MATH (strict FP32, also beside an FP32 tensor-core
 * kernel: that is what such a kernel replaces); CUDA_R_16BF and
 * CUDA_R_16F: cublasGemmEx with A = B = C of that type, CUBLAS_COMPUTE_32F,
 * CUBLAS_GEMM_DEFAULT_TENSOR_OP (what PyTorch's bf16 and fp16 matmuls
 * send).
 *
 * Per shape the bench describes the cuBLAS call as the shim would (a
 * gs_gemm of the BLAS entry: real device pointers, host pointer mode,
 * alpha 1, beta 0) and asks the table, in the router's order, whether the
 * kernel takes it; a shape outside the class is reported with the reason
 * and not timed. The launcher is called directly (gs_kernel_args).
 *
 * Method: data in [-1, 1), never zero, rounded to the data type (--data
 * randn or wide: FP32 kernels).
 * Error first: C and both outputs poisoned with NaN, beta = 0, ours and
 * cuBLAS compared with an FP64 GPU reference by relative Frobenius error
 * over all rows of up to 256 sampled columns. Then timing: inputs rotate
 * over enough buffer sets that the working set passes 3x the 60 MB L2 (at
 * most ~24 GB of sets; one rotation for all sides, so each call reads the
 * set read longest ago; the A of the sets is kept for the next shape of
 * the same size), warm-up, then --iters samples of ours and cuBLAS
 * interleaved (taking turns at running first), each sample timed with CUDA
 * events around enough back-to-back calls to last about a millisecond;
 * medians reported. Before each sample a spin kernel holds the stream
 * while the host queues the sample's calls, so a sample of short calls
 * times the GPU, not the host's launch rate. The SM clock is read through
 * NVML (dlopen'ed at run time, skipped cleanly if absent) while the
 * samples run, else measured with a clock64/globaltimer kernel right after
 * them. --preheat-ms runs cuBLAS alone (bf16 8192^3) that long first, so
 * every shape is measured in the sustained (power-capped) state, not the
 * first ones at boost clock.
 * --sm-target N (a kernel whose entry honours it) gives cuBLAS's handle
 * cublasSetSmCountTarget(N) and our launcher sm_limit = N, as the shim
 * passes a caller's target.
 *
 * --roofline adds two sides to every shape's samples, timed the same way,
 * interleaved with ours and cuBLAS: the same-size read ceiling (a kernel
 * that reads exactly the weight's elements (op(A)'s m*k, or op(B)'s n*k
 * where n > m: few rows), from the rotated weight of each call, in 16-byte loads on all SMs; per weight size the fastest of a set
 * of grid, block, unroll and load-type configurations, measured first) and
 * the launch floor (an empty kernel). The table and the CSV gain dtype,
 * ceiling_us, floor_us, ours_gbps and cublas_gbps (weight bytes / time),
 * ours_pct_ceiling and cublas_pct_ceiling (ceiling / time), after the
 * usual columns (without it the CSV is as before).
 *
 * --after-producer puts a producer kernel before every call of every side
 * (a decode step's order: a norm or an activation writes x, then the GEMM
 * reads it): it rewrites the call's x (op(B), or op(A) where op(B) is the
 * weight) in place, unchanged (each word
 * xor'ed with a zero the compiler cannot see), and never triggers its
 * dependents, as most frameworks' kernels. Every time reported is then a
 * producer and a call; the floor (with --roofline) is the producer and an
 * empty kernel, and the floor and the read ceiling are launched with
 * programmatic dependent launch (each waiting for the producer), as the
 * decode kernels are, so that they bound those like for like.
 * GEMMSHIM_PDL=0 in the environment launches our kernels as the shim then
 * does: plainly. A kernel launched with programmatic dependent launch (the
 * decode kernels) can overlap only the producer's end, as in a program;
 * back to back it would overlap its own previous launch, which flatters it.
 * The CSV's last column, launch, says how our side launched: pdl or plain
 * (a route table's column of that name: a row measured with pdl holds only
 * where the kernel launches so).
 *
 * Exit status: 0 ok; 1 if on some shape our error vs FP64 exceeds
 * err_vs_cublas * cuBLAS's + err_floor (the entry's bound: a result that
 * wrong is no result), or the launcher refused a call its entry takes;
 * 2 on a usage error, no CUDA GPU, or a CUDA error. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "config.h"
#include "hold.h"
#include "identity.h"
#include "lt_algo.h"
#include "lt_run.h"
#include "route_table.h"
#include "routes.h"
#include "variants.h"

typedef __nv_bfloat16 bf16;
typedef __half f16;

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

/* A usage error, no GPU or a failed setup: say why, exit 2. */
__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  exit(2);
}

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
    if (!init || !byBus || init() != 0 ||
        cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_dev) != cudaSuccess || byBus(bus, &dev) != 0)
      dev = nullptr;
    else if (drv)
      drv(driver, sizeof driver);
  }
  int clock_mhz() { /* -1: unknown */
    unsigned c = 0;
    return dev && getClock && getClock(dev, 1 /*NVML_CLOCK_SM*/, &c) == 0 ? (int)c : -1;
  }
  int power_w() {
    unsigned p = 0;
    return dev && getPower && getPower(dev, &p) == 0 ? (int)(p / 1000) : -1;
  }
};
static Nvml nvml;

/* ------------------------------------------------------------------ data */
/* --data: the distribution of A, B and C. Uniform is the default and the
 * only one for BF16 and FP16 data; randn and wide (randn * exp(4 N(0,1)),
 * a wide dynamic range) are for FP32 kernels. */
enum Dist { DIST_UNIFORM, DIST_RANDN, DIST_WIDE, DIST_UNIFORM01, DIST_COUNT };
static const char *const dist_names[DIST_COUNT] = {"uniform", "randn", "wide", "uniform01"};

__device__ __forceinline__ uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
  x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}
__device__ __forceinline__ float uniform_at(uint64_t seed, size_t i) { /* [-1, 1), never 0 */
  uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + i);
  float v = 2.f * ((float)(h >> 40) * (1.0f / 16777216.0f)) - 1.f;
  return v == 0.f ? 0.5f : v;
}
__device__ __forceinline__ double unit_open(uint64_t h) { /* (0, 1) */
  return ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
/* Box-Muller on two hashed uniforms; `which` draws an independent value. */
__device__ __forceinline__ float randn_at(uint64_t seed, size_t i, int which) {
  const uint64_t h1 = mix64(seed * 0x9e3779b97f4a7c15ull + 2 * i + 0x51ed27 * (uint64_t)which);
  const uint64_t h2 = mix64(h1 ^ 0xd6e8feb86659fd93ull);
  return (float)(sqrt(-2.0 * log(unit_open(h1))) * cos(6.283185307179586 * unit_open(h2)));
}
__global__ void fill_f32(float *p, size_t n, uint64_t seed, int dist) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    p[i] = dist == DIST_UNIFORM     ? uniform_at(seed, i)
           : dist == DIST_UNIFORM01 ? (float)(mix64(seed * 0x9e3779b97f4a7c15ull + i) >> 40) *
                                          (1.0f / 16777216.0f) /* [0, 1) */
           : dist == DIST_RANDN     ? randn_at(seed, i, 0)
                                    : randn_at(seed, i, 0) * expf(4.f * randn_at(seed, i, 1));
  }
}
/* bf16: the uniform draw rounded to bf16 (0.5 where that rounds to 0). */
__global__ void fill_bf16(bf16 *p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    bf16 v = __float2bfloat16_rn(uniform_at(seed, i));
    p[i] = __bfloat162float(v) == 0.f ? __float2bfloat16_rn(0.5f) : v;
  }
}
/* fp16: the same, rounded to fp16. */
__global__ void fill_f16(f16 *p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    f16 v = __float2half_rn(uniform_at(seed, i));
    p[i] = __half2float(v) == 0.f ? __float2half_rn(0.5f) : v;
  }
}
__device__ inline void set_nan(float *p) { *p = nanf(""); }
__device__ inline void set_nan(bf16 *p) { *p = __float2bfloat16_rn(nanf("")); }
__device__ inline void set_nan(f16 *p) { *p = __float2half_rn(nanf("")); }
template <typename T>
__global__ void fill_nan_kernel(T *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    set_nan(p + i);
}
static void fill_data(float *p, size_t n, uint64_t seed, int dist) {
  fill_f32<<<1024, 256>>>(p, n, seed, dist);
  CKL();
}
static void fill_data(bf16 *p, size_t n, uint64_t seed, int) {
  fill_bf16<<<1024, 256>>>(p, n, seed);
  CKL();
}
static void fill_data(f16 *p, size_t n, uint64_t seed, int) {
  fill_f16<<<1024, 256>>>(p, n, seed);
  CKL();
}
template <typename T>
static void fill_nan(T *p, size_t n) {
  fill_nan_kernel<T><<<1024, 256>>>(p, n);
  CKL();
}
__host__ __device__ inline double to_d(float x) { return (double)x; }
__device__ inline double to_d(bf16 x) { return (double)__bfloat162float(x); }
__device__ inline double to_d(f16 x) { return (double)__half2float(x); }

/* ------------------------------------------------------- FP64 reference */
/* Column s of the sample is column col_of(s) of the matrix. */
__host__ __device__ inline int64_t col_of(int64_t s, int64_t nsamp, int64_t n) {
  return s * n / nsamp;
}

template <typename T>
struct RefArgs {
  int64_t m, n, k, nsamp;
  int ta, tb;
  const T *A, *B;
  int64_t lda, ldb;
  double *out; /* m x nsamp, column-major: op(A) op(B) (alpha 1, beta 0) */
};
/* 16 x 16 tiles through shared memory. */
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
  if (i < r.m && s < r.nsamp) r.out[i + s * r.m] = acc;
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
      const double r = ref[i + s * m], d = to_d(D[i + j * ldd]) - r;
      a += d * d, b += r * r;
    }
  }
  s0[threadIdx.x] = a, s1[threadIdx.x] = b;
  __syncthreads();
  for (int w = 512; w > 0; w >>= 1) {
    if (threadIdx.x < w)
      s0[threadIdx.x] += s0[threadIdx.x + w], s1[threadIdx.x] += s1[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[0] = s0[0], sums[1] = s1[0];
}

/* The BIAS epilogue in the reference: bias[i] added to row i of each
 * sampled column. */
template <typename T>
__global__ void add_bias(double *ref, const T *bias, int64_t m, int64_t nsamp) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < m * nsamp;
       t += (int64_t)gridDim.x * blockDim.x)
    ref[t] += to_d(bias[t % m]);
}

/* Spin ~cycles SM cycles, report cycles and globaltimer nanoseconds. */
__global__ void clock_probe(long long cycles, unsigned long long *out) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long c0 = clock64(), c1;
  do c1 = clock64();
  while (c1 - c0 < cycles);
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  out[0] = (unsigned long long)(c1 - c0), out[1] = t1 - t0;
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

/* ------------------------------------------------- timing and --roofline */
/* The launch floor (kWait: launched with programmatic dependent launch, it
 * waits for the previous kernel as a PDL kernel must). */
template <bool kWait>
__global__ void empty_kernel() {
  if constexpr (kWait) asm volatile("griddepcontrol.wait;" ::: "memory");
}
/* --after-producer: n4 words rewritten unchanged (zero is 0). */
__global__ void produce_kernel(uint32_t *p, size_t n4, uint32_t zero) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] ^= zero;
}

/* The same-size read ceiling: reads exactly the weight's bytes, n16
 * 16-byte words (U of them in flight per thread, grid-stride) and then the
 * ntail (< 16) bytes after them, and folds everything into one word that
 * is stored only when it equals an arbitrary constant, so no load can be
 * dropped. NC: the loads go through the read-only path (ld.global.nc),
 * else streaming (ld.global.cs). The launch bounds' minimum of one block
 * lets ptxas keep all U loads in flight (with the default it folds each
 * word before the next load is issued). */
template <int U, int NC, bool kWait>
__global__ void __launch_bounds__(1024, 1) read_weight(const uint4 *__restrict__ p, size_t n16,
                                                    int ntail, unsigned *sink) {
  if constexpr (kWait) asm volatile("griddepcontrol.wait;" ::: "memory");
  unsigned x = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (size_t)(U - 1) * stride < n16; i += (size_t)U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = NC ? __ldg(p + i + u * stride) : __ldcs(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n16; i += stride) {
    const uint4 v = NC ? __ldg(p + i) : __ldcs(p + i);
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (blockIdx.x == 0 && (int)threadIdx.x < ntail)
    x ^= reinterpret_cast<const unsigned char *>(p + n16)[threadIdx.x];
  if (x == 0x9e3779b9u) *sink = x;
}
/* The read kernel's launch configurations; per weight size the bench
 * measures them all and keeps the fastest (read_cfg_of). */
struct ReadCfg {
  int grid_mult, block, unroll, nc; /* grid = grid_mult x SMs */
};
static std::vector<ReadCfg> read_cfgs() {
  std::vector<ReadCfg> c;
  for (int g : {1, 2, 4, 8})
    for (int t : {256, 512, 1024})
      for (int u : {4, 8})
        for (int nc : {0, 1}) c.push_back(ReadCfg{g, t, u, nc});
  return c;
}
/* A launch of f on the default stream, with programmatic dependent launch
 * when pdl (--after-producer: the ceiling and floor launched as the PDL
 * decode kernels are, so that they compare like for like). */
template <typename... P, typename... A>
static void launch_maybe_pdl(void (*f)(P...), dim3 grid, dim3 block, bool pdl, A... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  if (pdl) cfg.attrs = attr, cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, f, args...));
}
template <int U, int NC>
static void launch_read_cfg(bool pdl, dim3 grid, dim3 block, const uint4 *q, size_t n16, int ntail,
                            unsigned *sink) {
  if (pdl) launch_maybe_pdl(read_weight<U, NC, true>, grid, block, true, q, n16, ntail, sink);
  else read_weight<U, NC, false><<<grid, block>>>(q, n16, ntail, sink);
}
static void launch_read(int sms, unsigned *sink, const ReadCfg &c, const void *p, size_t bytes,
                        bool pdl) {
  const uint4 *q = static_cast<const uint4 *>(p); /* cudaMalloc: 256-byte aligned */
  const size_t n16 = bytes / 16;
  const int ntail = (int)(bytes % 16);
  const dim3 grid((unsigned)(sms * c.grid_mult)), block((unsigned)c.block);
  if (c.unroll == 4 && !c.nc) launch_read_cfg<4, 0>(pdl, grid, block, q, n16, ntail, sink);
  else if (c.unroll == 4) launch_read_cfg<4, 1>(pdl, grid, block, q, n16, ntail, sink);
  else if (!c.nc) launch_read_cfg<8, 0>(pdl, grid, block, q, n16, ntail, sink);
  else launch_read_cfg<8, 1>(pdl, grid, block, q, n16, ntail, sink);
  CKL();
}
static double now_us() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* ----------------------------------------------------------------- problem */
/* Tight leading dimensions, as a framework's contiguous tensors have.
 * batched: a strided-batched call of `batch` items (the shape line's fifth
 * field), each matrix right after the one before, as a framework's batched
 * tensors lie; the *_elems are one item's, the *_all every item's. */
struct Problem {
  int64_t m, n, k;
  int ta, tb;
  int64_t lda, ldb, ldc;
  bool batched;
  int64_t batch;
  int64_t a_elems() const { return lda * (ta ? m : k); }
  int64_t b_elems() const { return ldb * (tb ? k : n); }
  int64_t c_elems() const { return ldc * n; }
  int64_t a_all() const { return a_elems() * batch; }
  int64_t b_all() const { return b_elems() * batch; }
  int64_t c_all() const { return c_elems() * batch; }
};
static Problem make_problem(int64_t m, int64_t n, int64_t k, int ta, int tb) {
  return Problem{m, n, k, ta, tb, ta ? k : m, tb ? n : k, m, false, 1};
}
static const char *layout_name(int ta, int tb) {
  static const char *names[2][2] = {{"NN", "NT"}, {"TN", "TT"}};
  return names[ta][tb];
}

template <typename T>
static double rel_err(const Problem &p, const T *D, const double *ref, int64_t nsamp,
                      double *dsums) {
  err_sums<<<1, 1024>>>(D, p.ldc, ref, p.m, p.n, nsamp, dsums);
  CKL();
  double h[2];
  CK(cudaMemcpy(h, dsums, sizeof h, cudaMemcpyDeviceToHost));
  return sqrt(h[0] / h[1]);
}
template <typename T>
static void reference(const Problem &p, const T *A, const T *B, int64_t nsamp, double *out) {
  RefArgs<T> r{p.m, p.n, p.k, nsamp, p.ta, p.tb, A, B, p.lda, p.ldb, out};
  dim3 grid((unsigned)((p.m + 15) / 16), (unsigned)((nsamp + 15) / 16));
  ref_gemm<<<grid, 256>>>(r);
  CKL();
}

/* ---------------------------------------------------------- the two sides */
struct Bench {
  const gs_variant *v;
  cublasHandle_t h;
  int sm_target;   /* 0: none */
  int device;
  uint64_t ctx_id; /* cuCtxGetId of the current context, 0 when unknown */
  int dist;
  int math_mode;   /* of the described call (describe) */
  int roofline;    /* --roofline: also the read ceiling and the launch floor */
  int after_producer; /* --after-producer: a producer kernel before every call */
  int fixed_bc;    /* --fixed-bc: every call uses set 0's x and C (only the weight rotates) */
  int long_hold;   /* --long-hold: hold the stream 4 x the host's queueing + 500 us */
  int no_pdl;      /* GEMMSHIM_PDL=0 in the environment: launched as the shim
                      then launches (plainly) */
  int sms;         /* the GPU's SM count (the read kernel's grids) */
  int self;        /* --self: "ours" is cuBLAS again (the noise of the method) */
  unsigned *sink;  /* the read kernel's never-taken store */
  int dtype;       /* the data of the calls: the kernel's, or --dtype (cublaslt) */
  /* the route cublaslt: the algorithm measured; the handle heuristics are
   * asked on (the route's, and with --lt-call cuBLAS's own pick) */
  const gs_lt_algo *algo;
  cublasLtHandle_t lt;
  /* --lt-call: the call is cublasLtMatmul with ws_bytes of workspace at ws
   * and this epilogue (BIAS: bias holds the largest m of the shapes), and
   * cuBLAS's side is cublasLtMatmul with app_algo, the heuristic's first
   * algorithm for the shape within that workspace, as a program asking
   * cuBLASLt's heuristic runs it. Else a BLAS call (cublasGemmEx or
   * cublasSgemm_v2), whose route cublaslt gets zero-workspace algorithms. */
  int lt_call;
  int epilogue;
  void *bias;
  void *ws;
  size_t ws_bytes;
  cublasLtMatmulAlgo_t app_algo;
  /* --lt-route-workspace: the route cublaslt's algorithms need at most
   * this (<= ws_bytes: a table row serves calls made with less) */
  size_t route_ws_bytes;
};
static const float k_one = 1.f, k_zero = 0.f;

/* The cuBLAS call as the shim's BLAS entry describes it (interpose.c's
 * describe_blas), with the state load_state would read from our handle:
 * host pointer mode, the bench's SM-count target, the legacy stream. D is C
 * (a BLAS entry writes C). Math mode: see pick_math_mode. */
static gs_gemm describe(const Bench &b, const Problem &p, const void *A, const void *B, void *C) {
  const bool f32 = b.dtype == CUDA_R_32F;
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.entry = GS_NONE, g.entry_name = f32 ? "cublasSgemm_v2" : "cublasGemmEx";
  g.a_type = g.b_type = g.c_type = g.d_type = b.dtype;
  g.compute_type = f32 ? GS_NONE : CUBLAS_COMPUTE_32F;
  g.algo = f32 ? GS_NONE : CUBLAS_GEMM_DEFAULT_TENSOR_OP;
  g.scale_type = g.epilogue = g.bias_type = GS_NONE;
  g.trans_a = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_b = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.m = p.m, g.n = p.n, g.k = p.k, g.batch = p.batch;
  g.lda = p.lda, g.ldb = p.ldb, g.ldc = g.ldd = p.ldc;
  if (p.batched) {
    /* interpose.c's describe_blas of the strided-batched entry */
    g.is_batched_api = 1;
    g.entry_name = f32 ? "cublasSgemmStridedBatched" : "cublasGemmStridedBatchedEx";
    g.stride_a = p.a_elems(), g.stride_b = p.b_elems(), g.stride_c = g.stride_d = p.c_elems();
  }
  g.A = A, g.B = B, g.C = C, g.D = C;
  g.alpha = &k_one, g.beta = &k_zero;
  g.state_loaded = 1, g.pointer_mode = CUBLAS_POINTER_MODE_HOST, g.stream = nullptr;
  g.math_mode = b.math_mode, g.sm_count_target = b.sm_target;
  if (b.lt_call) {
    /* the same call as cublasLtMatmul describes it (interpose.c's
     * describe_lt): D is C, the bias of the output's type */
    g.is_lt = 1, g.entry_name = "cublasLtMatmul", g.algo = GS_NONE, g.math_mode = GS_NONE;
    g.is_batched_api = 0;   /* a batch is in its layouts (describe_lt) */
    g.compute_type = CUBLAS_COMPUTE_32F, g.scale_type = CUDA_R_32F, g.epilogue = b.epilogue;
    g.bias = b.epilogue == CUBLASLT_EPILOGUE_BIAS ? b.bias : nullptr;
    g.bias_type = b.dtype;
    g.workspace = b.ws, g.workspace_size = b.ws_bytes;
  }
  return g;
}

/* The math mode of the described call. BF16 and FP16: CUBLAS_DEFAULT_MATH
 * (the mode does not change a 16-bit GEMM with FP32 accumulation). FP32: the
 * routing policy gives a kernel with other numerics than SGEMM's (3xTF32)
 * only calls that opted in to FP32 emulation (routes.c,
 * gs_f32_tc_opted_in), so the call measured must be one that did: math
 * mode CUBLAS_FP32_EMULATED_BF16X9_MATH where the kernel's math_ok takes
 * it. A strict-FP32 kernel refuses that mode (gs_f32_strict_math) and is
 * measured on the plain CUBLAS_DEFAULT_MATH call. Either way cuBLAS, the
 * reference, runs in CUBLAS_DEFAULT_MATH. */
static int pick_math_mode(const gs_variant *v) {
  if (v->data_type != CUDA_R_32F) return CUBLAS_DEFAULT_MATH;
  Bench b{};
  b.v = v;
  b.math_mode = CUBLAS_FP32_EMULATED_BF16X9_MATH;
  Problem p = make_problem(v->m_mult, v->n_mult, v->k_mult, 0, 0);
  gs_gemm g = describe(b, p, nullptr, nullptr, nullptr);
  return v->math_ok(&g) ? CUBLAS_FP32_EMULATED_BF16X9_MATH : CUBLAS_DEFAULT_MATH;
}

/* The GEMMSHIM_FP32 mode under which the routing policy gives v a plain FP32
 * call (gemmshim tune's opt_in column): 0 for a kernel without an opt-in,
 * 1 for tc, 2 for tc-fast (tools/tune.h TN_OPT_IN_*); -1 for an opt-in
 * kernel no mode selects. The variable is put back as it was. */
static int opt_in_mode(const gs_variant *v) {
  const gs_route_entry *r = nullptr;
  for (size_t i = 0; i < gs_n_routes; ++i)
    if (gs_routes[i].kernel == v) r = &gs_routes[i];
  if (!r || !r->opted_in) return 0;
  const char *was = getenv("GEMMSHIM_FP32");
  const std::string saved = was ? was : "";
  static const char *const modes[] = {"tc", "tc-fast"};
  int found = -1;
  for (int m = 0; m < 2 && found < 0; ++m) {
    setenv("GEMMSHIM_FP32", modes[m], 1);
    gs_config_reload();
    Bench b{};
    b.v = v;
    b.math_mode = CUBLAS_DEFAULT_MATH;
    Problem p = make_problem(v->m_mult, v->n_mult, std::max<int64_t>(v->k_mult, v->k_min), 0, 0);
    gs_gemm g = describe(b, p, nullptr, nullptr, nullptr);
    g.state_loaded = 1;
    if (r->opted_in(&g) == 1) found = m + 1;
  }
  if (was) setenv("GEMMSHIM_FP32", saved.c_str(), 1);
  else unsetenv("GEMMSHIM_FP32");
  gs_config_reload();
  return found;
}

/* Whether the kernel takes the call, in the router's order (route.c): the
 * arguments, then (after load_state) the math, then the state, which needs
 * the real pointers. */
static gs_reason fits(const Bench &b, const gs_gemm &g, bool state) {
  gs_reason r = gs_variant_fits_args(b.v, &g);
  if (r == GS_R_ROUTED && !b.v->math_ok(&g)) r = GS_R_MATH_MODE;
  if (r == GS_R_ROUTED && state) r = gs_variant_fits_state(b.v, &g);
  /* the route cublaslt: the algorithm as the router checks it (route.c),
   * and within the least workspace the calls it is measured for gave */
  if (r == GS_R_ROUTED && b.v->runs_cublaslt &&
      (!gs_lt_algo_fits_call(b.algo, &g) || (b.lt_call && b.algo->workspace > b.route_ws_bytes)))
    r = GS_R_LT_ALGO_UNFIT;
  return r;
}

/* Our launcher on the call describe() gives: D = C (BLAS), alpha 1, beta 0,
 * host scalars, the legacy stream, as dispatch/launch.c fills it. */
/* The scratch of a kernel whose table entry asks for it (scratch_bytes):
 * one buffer, grown (outside any timing: a shape's first launch is its
 * error check) to the largest call's need. The shim takes it from a
 * stream-ordered pool per call instead; that cost is not timed here. */
static void *g_scratch;
static size_t g_scratch_bytes;

static void *scratch_for(const gs_variant *v, const gs_kernel_args &a) {
  if (!v || !v->scratch_bytes) return nullptr;
  const size_t need = v->scratch_bytes(&a);
  if (need > g_scratch_bytes) {
    CK(cudaDeviceSynchronize());
    if (g_scratch) CK(cudaFree(g_scratch));
    g_scratch = nullptr, g_scratch_bytes = 0;
    CK(cudaMalloc(&g_scratch, need));
    g_scratch_bytes = need;
  }
  return need ? g_scratch : nullptr;
}

static gs_kernel_args kernel_args(const Bench &b, const Problem &p, const void *A, const void *B,
                                  void *C) {
  gs_kernel_args a;
  memset(&a, 0, sizeof a);
  a.m = p.m, a.n = p.n, a.k = p.k, a.trans_a = p.ta, a.trans_b = p.tb;
  a.A = A, a.lda = p.lda, a.B = B, a.ldb = p.ldb;
  a.C = C, a.ldc = p.ldc, a.D = C, a.ldd = p.ldc;
  a.batch = p.batch;
  if (p.batched) a.stride_a = p.a_elems(), a.stride_b = p.b_elems(), a.stride_c = a.stride_d = p.c_elems();
  a.alpha = k_one, a.beta = k_zero, a.stream = 0;
  a.bias = b.lt_call && b.epilogue == CUBLASLT_EPILOGUE_BIAS ? b.bias : nullptr;
  a.sm_limit = b.sm_target, a.device = b.device, a.ctx_id = b.ctx_id;
  a.no_pdl = b.no_pdl;
  if (!b.self) a.scratch = scratch_for(b.v, a);
  return a;
}

static void run_cublas(const Bench &b, const Problem &p, const float *A, const float *B,
                       float *C) {
  const cublasOperation_t ta = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (p.batched)
    CKB(cublasSgemmStridedBatched(b.h, ta, tb, (int)p.m, (int)p.n, (int)p.k, &k_one, A,
                                  (int)p.lda, p.a_elems(), B, (int)p.ldb, p.b_elems(), &k_zero, C,
                                  (int)p.ldc, p.c_elems(), (int)p.batch));
  else
    CKB(cublasSgemm(b.h, ta, tb, (int)p.m, (int)p.n, (int)p.k, &k_one, A, (int)p.lda, B,
                    (int)p.ldb, &k_zero, C, (int)p.ldc));
}
/* cublasGemmEx, or cublasGemmStridedBatchedEx, of 16-bit data. */
static void run_cublas_ex(const Bench &b, const Problem &p, const void *A, const void *B, void *C,
                          cudaDataType t) {
  const cublasOperation_t ta = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (p.batched)
    CKB(cublasGemmStridedBatchedEx(b.h, ta, tb, (int)p.m, (int)p.n, (int)p.k, &k_one, A, t,
                                   (int)p.lda, p.a_elems(), B, t, (int)p.ldb, p.b_elems(), &k_zero,
                                   C, t, (int)p.ldc, p.c_elems(), (int)p.batch,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  else
    CKB(cublasGemmEx(b.h, ta, tb, (int)p.m, (int)p.n, (int)p.k, &k_one, A, t, (int)p.lda, B, t,
                     (int)p.ldb, &k_zero, C, t, (int)p.ldc, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT_TENSOR_OP));
}
static void run_cublas(const Bench &b, const Problem &p, const bf16 *A, const bf16 *B, bf16 *C) {
  run_cublas_ex(b, p, A, B, C, CUDA_R_16BF);
}
static void run_cublas(const Bench &b, const Problem &p, const f16 *A, const f16 *B, f16 *C) {
  run_cublas_ex(b, p, A, B, C, CUDA_R_16F);
}

/* cuBLAS's side of a --lt-call (below, beside the route's cuBLASLt code). */
static void run_lt_app(const Bench &b, const Problem &p, const void *A, const void *B, void *C);

/* cuBLAS as the program calls it: the BLAS entry, or cublasLtMatmul. */
template <typename T>
static void cublas_side(const Bench &b, const Problem &p, const T *A, const T *B, T *C) {
  if (b.lt_call) run_lt_app(b, p, A, B, C);
  else run_cublas(b, p, A, B, C);
}

/* ------------------------------------------------------------- accuracy */
/* --accuracy (FP32 kernels): ours and cuBLAS SGEMM against an FP64
 * reference over every output, per seed: the relative Frobenius error
 * ||D - ref|| / ||ref|| and the worst |D - ref|_ij / (|A| |B|)_ij; both
 * references by cublasDgemm on FP64 copies (of |A| and |B| for the
 * second). */
__global__ void to_f64(const float *src, double *dst, size_t n, int take_abs) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = take_abs ? fabs((double)src[i]) : (double)src[i];
}

/* out[0] += sum (D - ref)^2, out[1] += sum ref^2, out[2] = max of
 * |D - ref| / mag (as the bits of a non-negative double; NaN counts as
 * the largest). */
__global__ void acc_metrics(const float *D, int64_t ldd, const double *ref, const double *mag,
                            int64_t m, int64_t n, double *out) {
  double e2 = 0, r2 = 0, worst = 0;
  const size_t total = (size_t)m * n;
  for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total;
       t += (size_t)gridDim.x * blockDim.x) {
    const int64_t i = (int64_t)(t % m), j = (int64_t)(t / m);
    const double r = ref[t], e = (double)D[i + j * ldd] - r;
    e2 += e * e, r2 += r * r;
    const double w = mag[t] > 0 ? fabs(e) / mag[t] : (e != 0 ? INFINITY : 0.0);
    if (!(w <= worst)) worst = w != w ? INFINITY : w;
  }
  for (int o = 16; o > 0; o >>= 1) {
    e2 += __shfl_down_sync(0xffffffffu, e2, o);
    r2 += __shfl_down_sync(0xffffffffu, r2, o);
    worst = fmax(worst, __shfl_down_sync(0xffffffffu, worst, o));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&out[0], e2);
    atomicAdd(&out[1], r2);
    atomicMax(reinterpret_cast<unsigned long long *>(&out[2]),
              (unsigned long long)__double_as_longlong(worst));
  }
}

enum Outcome { MEASURED, OUTSIDE, REFUSED };

struct AccRow {
  double ours_err, cub_err, ours_elem, cub_elem;
};

/* One shape over seeds 1..nseeds (data seeds 7000 + 2 s, 7001 + 2 s).
 * OUTSIDE (*why set) as bench_shape. */
static Outcome accuracy_shape(const Bench &b, const Problem &p, int nseeds,
                              std::vector<AccRow> &rows, gs_reason *why) {
  rows.clear();
  *why = fits(b, describe(b, p, nullptr, nullptr, nullptr), false);
  if (*why != GS_R_ROUTED) return OUTSIDE;
  float *A, *B, *Do, *Dc;
  double *A64, *B64, *ref, *mag, *sums;
  const size_t mn = (size_t)p.m * p.n;
  CK(cudaMalloc(&A, p.a_elems() * 4));
  CK(cudaMalloc(&B, p.b_elems() * 4));
  CK(cudaMalloc(&Do, p.c_elems() * 4));
  CK(cudaMalloc(&Dc, p.c_elems() * 4));
  CK(cudaMalloc(&A64, p.a_elems() * 8));
  CK(cudaMalloc(&B64, p.b_elems() * 8));
  CK(cudaMalloc(&ref, mn * 8));
  CK(cudaMalloc(&mag, mn * 8));
  CK(cudaMalloc(&sums, 3 * 8));
  auto release = [&]() {
    cudaFree(A), cudaFree(B), cudaFree(Do), cudaFree(Dc), cudaFree(A64), cudaFree(B64);
    cudaFree(ref), cudaFree(mag), cudaFree(sums);
  };
  *why = fits(b, describe(b, p, A, B, Do), true);
  if (*why == GS_R_ROUTED) *why = fits(b, describe(b, p, A, B, Dc), true);
  if (*why != GS_R_ROUTED) return release(), OUTSIDE;
  const double one = 1.0, zero = 0.0;
  const cublasOperation_t ta = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto dgemm = [&](double *out) {
    CKB(cublasDgemm(b.h, ta, tb, (int)p.m, (int)p.n, (int)p.k, &one, A64, (int)p.lda, B64,
                    (int)p.ldb, &zero, out, (int)p.m));
  };
  auto metrics = [&](const float *D, double *err, double *elem) {
    CK(cudaMemset(sums, 0, 3 * 8));
    acc_metrics<<<1024, 256>>>(D, p.ldc, ref, mag, p.m, p.n, sums);
    CKL();
    double h[3];
    CK(cudaMemcpy(h, sums, sizeof h, cudaMemcpyDeviceToHost));
    *err = h[1] > 0 ? sqrt(h[0] / h[1]) : (h[0] > 0 ? INFINITY : 0.0);
    *elem = h[2];
  };
  for (int s = 1; s <= nseeds; ++s) {
    fill_data(A, p.a_elems(), 7000 + 2 * s, b.dist);
    fill_data(B, p.b_elems(), 7001 + 2 * s, b.dist);
    to_f64<<<1024, 256>>>(A, A64, p.a_elems(), 0);
    to_f64<<<1024, 256>>>(B, B64, p.b_elems(), 0);
    CKL();
    dgemm(ref);
    to_f64<<<1024, 256>>>(A, A64, p.a_elems(), 1);
    to_f64<<<1024, 256>>>(B, B64, p.b_elems(), 1);
    CKL();
    dgemm(mag);
    fill_nan(Do, p.c_elems());
    fill_nan(Dc, p.c_elems());
    gs_kernel_args ka = kernel_args(b, p, A, B, Do);
    const gs_kstatus st = b.v->launch(&ka);
    if (st == GS_K_UNSUPPORTED) return release(), REFUSED;
    if (st != GS_K_OK)
      die("%s: launch status %d for %lld x %lld x %lld %s\n", b.v->name, (int)st, (long long)p.m,
          (long long)p.n, (long long)p.k, layout_name(p.ta, p.tb));
    run_cublas(b, p, A, B, Dc);
    CK(cudaDeviceSynchronize());
    AccRow r;
    metrics(Do, &r.ours_err, &r.ours_elem);
    metrics(Dc, &r.cub_err, &r.cub_elem);
    rows.push_back(r);
  }
  release();
  return MEASURED;
}

/* ------------------------------------------------------------- benchmark */
struct Row {
  double ours_tf, cub_tf, ratio, ours_err, cub_err, ours_us, cub_us;
  double ours_host_us, cub_host_us; /* the host's time to issue one call */
  double ceil_us, floor_us; /* --roofline */
  int mhz, watts, samples, reps, nsets, path;
};

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The A of every buffer set, kept from one shape to the next while its size
 * stays the same (a sweep over n and layouts of one weight fills them once).
 * Set s holds the same data however it was made (fill_data, seed 1000 + 3s),
 * so keeping it changes no result. */
struct APool {
  size_t bytes = 0;
  std::vector<void *> bufs;
  void clear() {
    for (void *q : bufs) CK(cudaFree(q));
    bufs.clear();
    bytes = 0;
  }
};
static APool a_pool;
template <typename T>
static void a_sets(const Bench &b, int64_t elems, int nsets, std::vector<T *> &A) {
  const size_t bytes = (size_t)elems * sizeof(T);
  if (a_pool.bytes != bytes) a_pool.clear(), a_pool.bytes = bytes;
  while ((int)a_pool.bufs.size() < nsets) {
    const int s = (int)a_pool.bufs.size();
    void *q;
    CK(cudaMalloc(&q, bytes));
    a_pool.bufs.push_back(q);
    fill_data(static_cast<T *>(q), (size_t)elems, 1000 + 3 * s, b.dist);
  }
  for (int s = 0; s < nsets; ++s) A[s] = static_cast<T *>(a_pool.bufs[s]);
}
/* The weight: the operand a decode-shaped call reads once, op(A) (m x k),
 * or op(B) (k x n) where n > m (few rows: a column-major caller's x^T W).
 * Its sets rotate past the L2 (kept from shape to shape); --fixed-bc holds
 * the other operand, x, and C; --after-producer rewrites x; --roofline reads
 * the weight's bytes. */
static bool weight_is_b(const Problem &p) { return p.n > p.m; }
static double weight_elems(const Problem &p) {
  return (double)(weight_is_b(p) ? p.n : p.m) * (double)p.k;
}
/* weight bytes -> the fastest read configuration (index in read_cfgs()) */
static std::map<size_t, int> read_cfg_of;

/* One shape. OUTSIDE (*why set): the kernel's class does not take the
 * call, nothing timed. REFUSED: the launcher returned GS_K_UNSUPPORTED on a
 * call the entry takes (the shim would forward it), nothing timed. */
template <typename T>
static Outcome bench_shape(const Bench &b, const Problem &p, int iters, int warmup, Row &row,
                           gs_reason *why) {
  const gs_variant *v = b.v;
  const size_t es = sizeof(T);
  row = Row();
  /* the arguments and math first: no memory for a shape outside the class
   * (--self times cuBLAS twice: any shape of the data type) */
  *why = b.self ? GS_R_ROUTED : fits(b, describe(b, p, nullptr, nullptr, nullptr), false);
  if (*why != GS_R_ROUTED) return OUTSIDE;

  const double set_bytes = (double)(p.a_all() + p.b_all() + p.c_all()) * es;
  const double target = 3.0 * 60e6 * 1.2; /* > 3x L2 */
  int nsets = (int)std::min(64.0, std::max(1.0, ceil(target / set_bytes)));
  /* bound memory: at most ~24 GB of rotating sets */
  while (nsets > 1 && nsets * set_bytes > 24e9) --nsets;
  row.nsets = nsets;

  const bool wb = weight_is_b(p);
  const int64_t w_all = wb ? p.b_all() : p.a_all(), x_all = wb ? p.a_all() : p.b_all();
  std::vector<T *> W(nsets), X(nsets), C(nsets);
  a_sets<T>(b, w_all, nsets, W);
  for (int s = 0; s < nsets; ++s) {
    CK(cudaMalloc(&X[s], x_all * es));
    CK(cudaMalloc(&C[s], p.c_all() * es));
    fill_data(X[s], x_all, 1001 + 3 * s, b.dist);
    fill_data(C[s], p.c_all(), 1002 + 3 * s, b.dist);
  }
  T *Do, *Dc;
  double *ref, *dsums;
  const int64_t nsamp = std::min<int64_t>(p.n, 256);
  CK(cudaMalloc(&Do, p.c_all() * es));
  CK(cudaMalloc(&Dc, p.c_all() * es));
  CK(cudaMalloc(&ref, p.m * nsamp * 8));
  CK(cudaMalloc(&dsums, 16));
  auto release = [&]() {
    for (int s = 0; s < nsets; ++s) cudaFree(X[s]), cudaFree(C[s]);
    cudaFree(Do), cudaFree(Dc), cudaFree(ref), cudaFree(dsums);
  };
  /* op(A) and op(B) of a call that reads weight set s and x set sx */
  auto A_of = [&](int s, int sx) { return wb ? X[sx] : W[s]; };
  auto B_of = [&](int s, int sx) { return wb ? W[s] : X[sx]; };
  /* every call made below, with its own pointers, must be one the kernel
   * takes (alignment of the real buffers) */
  if (!b.self) {
    *why = fits(b, describe(b, p, A_of(0, 0), B_of(0, 0), Do), true);
    for (int s = 0; s < nsets && *why == GS_R_ROUTED; ++s)
      *why = fits(b, describe(b, p, A_of(s, s), B_of(s, s), C[s]), true);
  }
  if (*why != GS_R_ROUTED) return release(), OUTSIDE;

  auto launch = [&](const T *a, const T *bb, T *c) {
    if (b.self) {
      cublas_side(b, p, a, bb, c);
      return GS_K_OK;
    }
    gs_kernel_args ka = kernel_args(b, p, a, bb, c);
    if (v->runs_cublaslt) {
      /* through the shim's own code: the call's matmul, built per call */
      gs_gemm g = describe(b, p, a, bb, c);
      return gs_lt_run(&g, b.algo, &ka);
    }
    return v->launch(&ka);
  };
  const gs_kernel_args ka0 = kernel_args(b, p, A_of(0, 0), B_of(0, 0), Do);
  row.path = v->path_of && !b.self ? v->path_of(&ka0) : -1;

  /* error first: set 0, C and outputs poisoned, beta = 0; a batch's
   * first and last items, each side's worse error */
  fill_nan(C[0], p.c_all());
  fill_nan(Do, p.c_all());
  fill_nan(Dc, p.c_all());
  cublas_side(b, p, A_of(0, 0), B_of(0, 0), Dc);
  CK(cudaDeviceSynchronize());
  gs_kstatus st = launch(A_of(0, 0), B_of(0, 0), Do);
  /* the route cublaslt: cuBLASLt refused or failed this algorithm (said
   * on the shape's line); the others are still measured */
  if (st == GS_K_UNSUPPORTED || (st != GS_K_OK && v->runs_cublaslt)) return release(), REFUSED;
  if (st != GS_K_OK)
    die("%s: launch status %d for %lld x %lld x %lld %s\n", v->name, (int)st, (long long)p.m,
        (long long)p.n, (long long)p.k, layout_name(p.ta, p.tb));
  CK(cudaDeviceSynchronize());
  row.cub_err = row.ours_err = 0;
  auto worse = [](double x, double y) { return x != x || y != y ? NAN : std::max(x, y); };
  const int64_t checked[2] = {0, p.batch - 1};
  for (int c = 0; c < (p.batch > 1 ? 2 : 1); ++c) {
    const int64_t i = checked[c];
    reference<T>(p, A_of(0, 0) + i * p.a_elems(), B_of(0, 0) + i * p.b_elems(), nsamp, ref);
    if (ka0.bias) {
      add_bias<T><<<256, 256>>>(ref, (const T *)ka0.bias, p.m, nsamp);
      CKL();
    }
    row.cub_err = worse(row.cub_err, rel_err(p, Dc + i * p.c_elems(), ref, nsamp, dsums));
    row.ours_err = worse(row.ours_err, rel_err(p, Do + i * p.c_elems(), ref, nsamp, dsums));
  }

  /* timing. Sides: 0 ours, 1 cuBLAS; with --roofline also 2 the read
   * ceiling (the weight's bytes from the set's A) and 3 the launch floor.
   * One rotation for all sides: every call reads the set read longest ago,
   * whichever side read it. */
  const int nsides = b.roofline ? 4 : 2;
  const size_t wbytes = (size_t)weight_elems(p) * es;
  static const std::vector<ReadCfg> cfgs = read_cfgs();
  int rc = 0; /* the read configuration in use */
  long next_set = 0;
  const size_t x_words = (size_t)x_all * es / 4;
  auto produce = [&](int s) {
    const unsigned blocks = (unsigned)std::min<size_t>((x_words + 255) / 256, (size_t)b.sms);
    produce_kernel<<<std::max(1u, blocks), 256>>>(reinterpret_cast<uint32_t *>(X[s]), x_words, 0u);
    CKL();
  };
  auto call = [&](int which) {
    if (which == 3) {
      if (b.after_producer) produce(b.fixed_bc ? 0 : (int)(next_set % nsets));
      if (b.after_producer) launch_maybe_pdl(empty_kernel<true>, dim3(1), dim3(32), true);
      else empty_kernel<false><<<1, 32>>>();
      CKL();
      return;
    }
    const int s = (int)(next_set++ % nsets), sbc = b.fixed_bc ? 0 : s;
    if (b.after_producer) produce(sbc);
    if (which == 1) cublas_side(b, p, A_of(s, sbc), B_of(s, sbc), C[sbc]);
    else if (which == 2) launch_read(b.sms, b.sink, cfgs[rc], W[s], wbytes, b.after_producer);
    else if (launch(A_of(s, sbc), B_of(s, sbc), C[sbc]) != GS_K_OK) die("%s: launch failed\n", v->name);
  };
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  /* the stream held while the host queues a whole sample (kernels/hold.h):
   * the sample then times the GPU, not the host's launch rate */
  auto hold = [](double us) {
    int e = gs_hold_stream(0, us);
    if (e) die("hold: %s\n", cudaGetErrorString((cudaError_t)e));
  };
  /* the hold that covers the host's queueing of n calls of host_us each
   * (--long-hold: a wider margin, to see whether a side's time depends on
   * it) */
  auto hold_for = [&b](int n, double host_us) {
    return b.long_hold ? 4.0 * n * host_us + 500.0 : 1.5 * n * host_us + 20.0;
  };
  /* the calls for a sample of about ms milliseconds */
  auto reps_for = [](double est_ms, double ms) {
    return (int)std::min(2000.0, std::max(1.0, ceil(ms / est_ms)));
  };
  /* One sample on its own: the stream held for hold_us, n calls between two
   * events. Milliseconds a call on the GPU; *host_us: the host's time to
   * queue one. */
  auto sample = [&](int which, int n, double hold_us, double *host_us) {
    hold(hold_us);
    CK(cudaEventRecord(e0));
    const double t0 = now_us();
    for (int i = 0; i < n; ++i) call(which);
    *host_us = (now_us() - t0) / n;
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return (double)ms / n;
  };
  /* warm-up, then the time of a call: 3 calls, and for short calls again
   * over a quarter of a millisecond */
  auto estimate = [&](int which, int warm, double *host_us) {
    for (int i = 0; i < warm; ++i) call(which);
    double est = sample(which, 3, 500.0, host_us);
    if (est < 0.1) {
      const int n = reps_for(est, 0.25);
      est = sample(which, n, hold_for(n, *host_us), host_us);
    }
    return est;
  };
  if (b.roofline) {
    /* the fastest read configuration for this weight size, once per size:
     * the median of 3 short samples of each */
    auto known = read_cfg_of.find(wbytes);
    if (known != read_cfg_of.end()) {
      rc = known->second;
    } else {
      int best = 0;
      double best_ms = INFINITY;
      for (rc = 0; rc < (int)cfgs.size(); ++rc) {
        double h;
        const int n = reps_for(estimate(2, 2, &h), 0.3);
        std::vector<double> ts;
        for (int i = 0; i < 3; ++i) ts.push_back(sample(2, n, hold_for(n, h), &h));
        const double ms = median(ts);
        if (ms < best_ms) best_ms = ms, best = rc;
      }
      rc = best;
      read_cfg_of[wbytes] = rc;
      const ReadCfg &c = cfgs[rc];
      printf("# read ceiling for %zu bytes: grid %d x SMs, %d threads, %d 16-byte loads in "
             "flight, %s (the fastest of %zu configurations)\n",
             wbytes, c.grid_mult, c.block, c.unroll, c.nc ? "ld.global.nc" : "ld.global.cs",
             cfgs.size());
      fflush(stdout);
    }
  }
  double est[4] = {0, 0, 0, 0}, host_us[4] = {0, 0, 0, 0};
  for (int which = 0; which < nsides; ++which)
    est[which] = estimate(which, which < 2 ? warmup : std::max(warmup, 2), &host_us[which]);
  /* ours and cuBLAS: the same calls a sample; ceiling and floor their own */
  int reps[4] = {1, 1, 1, 1};
  reps[0] = reps[1] = reps_for(std::max(est[0], est[1]), 1.0);
  for (int which = 2; which < nsides; ++which) reps[which] = reps_for(est[which], 1.0);
  row.reps = reps[0];
  row.samples = iters;
  row.ours_host_us = host_us[0], row.cub_host_us = host_us[1];
  std::vector<cudaEvent_t> ev(2 * nsides * iters);
  for (auto &e : ev) CK(cudaEventCreate(&e));
  for (int it = 0; it < iters; ++it)
    for (int q = 0; q < nsides; ++q) {
      const int which = (q + it) % nsides; /* each side in turn runs first */
      cudaEvent_t *pe = &ev[2 * nsides * it + 2 * which];
      hold(hold_for(reps[which], host_us[which]));
      CK(cudaEventRecord(pe[0]));
      for (int r = 0; r < reps[which]; ++r) call(which);
      CK(cudaEventRecord(pe[1]));
    }
  /* read the clock while the samples run */
  auto running = [&]() {
    for (int w = 0; w < nsides; ++w)
      if (cudaEventQuery(ev[2 * nsides * (iters - 1) + 2 * w + 1]) == cudaErrorNotReady)
        return true;
    return false;
  };
  std::vector<double> clocks, watts;
  while (running()) {
    int c = nvml.clock_mhz(), w = nvml.power_w();
    if (c > 0) clocks.push_back(c);
    if (w > 0) watts.push_back(w);
    usleep(2000);
  }
  CK(cudaDeviceSynchronize());
  CKL();
  std::vector<double> t[4];
  for (int it = 0; it < iters; ++it)
    for (int which = 0; which < nsides; ++which) {
      float ms;
      CK(cudaEventElapsedTime(&ms, ev[2 * nsides * it + 2 * which],
                              ev[2 * nsides * it + 2 * which + 1]));
      t[which].push_back(ms / reps[which]);
    }
  row.mhz = clocks.empty() ? probe_clock_mhz() : (int)median(clocks);
  row.watts = watts.empty() ? -1 : (int)median(watts);
  const double flop = 2.0 * p.m * p.n * p.k * p.batch;
  row.ours_us = median(t[0]) * 1e3;
  row.cub_us = median(t[1]) * 1e3;
  row.ours_tf = flop / (row.ours_us * 1e-6) / 1e12;
  row.cub_tf = flop / (row.cub_us * 1e-6) / 1e12;
  row.ratio = row.ours_tf / row.cub_tf;
  if (b.roofline) row.ceil_us = median(t[2]) * 1e3, row.floor_us = median(t[3]) * 1e3;

  for (auto &e : ev) cudaEventDestroy(e);
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  release();
  return MEASURED;
}

/* cuBLAS alone for about ms milliseconds (bf16 8192^3 GemmEx, whatever the
 * kernel), so that the sweep starts in the sustained power/clock state. */
static void preheat(const Bench &b, int ms) {
  Problem p = make_problem(8192, 8192, 8192, 1, 0);
  bf16 *A, *B, *C;
  CK(cudaMalloc(&A, p.a_elems() * sizeof(bf16)));
  CK(cudaMalloc(&B, p.b_elems() * sizeof(bf16)));
  CK(cudaMalloc(&C, p.c_elems() * sizeof(bf16)));
  fill_data(A, p.a_elems(), 7, DIST_UNIFORM);
  fill_data(B, p.b_elems(), 8, DIST_UNIFORM);
  CK(cudaDeviceSynchronize());
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  double el = 0;
  int calls = 0;
  while (el < ms) {
    for (int i = 0; i < 20; ++i) run_cublas(b, p, A, B, C);
    calls += 20;
    CK(cudaDeviceSynchronize());
    clock_gettime(CLOCK_MONOTONIC, &t1);
    el = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
  }
  printf("# preheat: %d cuBLAS bf16 8192^3 calls in %.0f ms, SM clock now %d MHz, %d W\n", calls,
         el, nvml.clock_mhz(), nvml.power_w());
  fflush(stdout);
  cudaFree(A), cudaFree(B), cudaFree(C);
}

/* ------------------------------------------------------------------ main */
static const char *dtype_name(int t) {
  return t == CUDA_R_32F ? "FP32" : t == CUDA_R_16BF ? "BF16" : t == CUDA_R_16F ? "FP16" : "other";
}
/* the CSV's dtype column */
static const char *dtype_csv(int t) {
  return t == CUDA_R_32F ? "f32" : t == CUDA_R_16BF ? "bf16" : t == CUDA_R_16F ? "f16" : "other";
}
static std::string layouts_text(unsigned bits) {
  static const char *names[4] = {"NN", "TN", "NT", "TT"}; /* bit trans_a + 2 * trans_b */
  std::string s;
  for (int i = 0; i < 4; ++i)
    if (bits & (1u << i)) s += (s.empty() ? "" : ",") + std::string(names[i]);
  return s.empty() ? "-" : s;
}
static void list_table(FILE *f) {
  fprintf(f, "%-28s %-5s %-12s %-17s %-6s %-14s %-9s %-6s %s\n", "kernel", "data", "layouts",
          "m x n x k mult", "n max", "few rows", "sm-target", "arch", "error bound vs FP64");
  for (size_t i = 0; i < gs_n_variants; ++i) {
    const gs_variant *v = gs_variants[i];
    char mult[64], arch[16], nmax[24] = "-", few[32] = "-";
    snprintf(mult, sizeof mult, "%lld x %lld x %lld", (long long)v->m_mult, (long long)v->n_mult,
             (long long)v->k_mult);
    if (v->cc_major) snprintf(arch, sizeof arch, "sm_%d%d", v->cc_major, v->cc_minor);
    else snprintf(arch, sizeof arch, "any");
    if (v->n_max) snprintf(nmax, sizeof nmax, "%lld", (long long)v->n_max);
    if (v->layouts_few_rows)
      snprintf(few, sizeof few, "m<=%lld %s", (long long)v->m_max,
               layouts_text(v->layouts_few_rows).c_str());
    fprintf(f, "%-28s %-5s %-12s %-17s %-6s %-14s %-9s %-6s %gx cuBLAS + %g\n", v->name,
            v->runs_cublaslt ? "16bit" : dtype_name(v->data_type), layouts_text(v->layouts).c_str(), mult, nmax,
            few, v->honours_sm_target ? "yes" : "no", arch, v->err_vs_cublas, v->err_floor);
  }
}
static void usage() {
  fprintf(stderr,
          "usage: gemmshim-bench --list\n"
          "       gemmshim-bench --list-csv\n"
          "       gemmshim-bench --identity [--device N]\n"
          "       gemmshim-bench --kernel NAME --shapes FILE [--csv OUT] [--iters N]\n"
          "                      [--warmup N] [--preheat-ms MS] [--sm-target N]\n"
          "                      [--data uniform|randn|wide] [--roofline] [--self]\n"
          "                      [--after-producer] [--fixed-bc] [--long-hold]\n"
          "                      [--device N] [--math-mode N]\n"
          "       gemmshim-bench --kernel NAME --shapes FILE --accuracy [--seeds N]\n"
          "                      [--data uniform|randn|wide|uniform01] [--csv OUT]\n"
          "                      [--report-only]\n"
          "       gemmshim-bench --kernel cublaslt --dtype bf16|f16 --shapes FILE\n"
          "                      (--lt-top N | --lt-algos FILE) ...\n"
          "  any of the timed forms: [--lt-call BYTES [--epilogue default|bias]\n"
          "                      [--lt-route-workspace BYTES]]\n"
          "  NAME: a kernel of the table (--list). --iters: samples per side (20).\n"
          "  --warmup: calls per side before timing (3). --preheat-ms: cuBLAS alone\n"
          "  first (0). --sm-target: kernels that honour an SM-count target only.\n"
          "  --data randn|wide|uniform01: FP32 kernels only (default uniform in\n"
          "  [-1, 1); uniform01: [0, 1)).\n"
          "  --accuracy (FP32 kernels): no timing; per shape and seed (--seeds, 3)\n"
          "  ours and cuBLAS SGEMM against FP64 over every output: relative\n"
          "  Frobenius error and worst |D - ref| / (|A| |B|); exit 1 when a shape's\n"
          "  median ratio is over 1.0 or its worst over 1.1 (either measure; not\n"
          "  with --report-only), on a NaN error, or when no shape was measured.\n"
          "  Shape file: \"m n k layout [batch]\" a line; batch: a strided-batched call.\n"
          "  --roofline: also time a read of the weight's bytes (the ceiling) and an\n"
          "  empty kernel (the floor) per shape; adds columns to the table and CSV.\n"
          "  The weight is op(A), or op(B) where n > m (few rows).\n"
          "  --after-producer: a kernel that rewrites x (the other operand) before\n"
          "  every call of every side (a decode step's order); every time is then the\n"
          "  pair; with --roofline the ceiling and floor are launched with programmatic\n"
          "  dependent launch.\n"
          "  --fixed-bc: only the weight rotates past the L2; every call uses one x and\n"
          "  C (the producer rewrites that x). --long-hold: each sample's stream held 4x the\n"
          "  host's queueing time plus 500 us (1.5x plus 20 us). Both are controls, to\n"
          "  see what a side's time depends on.\n"
          "  --self: cuBLAS against itself, timed as a kernel would be (the method's\n"
          "  noise); NAME gives the data type, any shape of it is timed.\n"
          "  --list-csv: the kernel table as CSV (kernel,dtype). --identity: this\n"
          "  GPU's route-table validators as a table writes them, and its UUID.\n"
          "  --device: the CUDA device to use (0). --math-mode N: a BF16/FP16 call in\n"
          "  cuBLAS math mode N (the handle's and the described call's).\n"
          "  The route cublaslt (cuBLASLt's own algorithms, run as the shim runs them):\n"
          "  --lt-top N measures each of cuBLASLt's first N heuristic algorithms for\n"
          "  the call, --lt-algos FILE those given (one lt_algo text a line); the CSV\n"
          "  gains ours_host_us and cublas_host_us (the host's time to issue one\n"
          "  call), lt_rank, lt_rebuilt (1: the fields rebuild the heuristic's bytes;\n"
          "  0: the raw bytes are kept), lt_within_bound (the error bound) and\n"
          "  lt_algo. Without --lt-call the call is a BLAS call, whose route gets\n"
          "  zero-workspace algorithms only.\n"
          "  --lt-call BYTES: the call is cublasLtMatmul (CUBLAS_COMPUTE_32F) with BYTES of\n"
          "  workspace (D = C; --epilogue bias: a bias of the output's type), and\n"
          "  cuBLAS's side runs it with cuBLASLt's first heuristic algorithm within\n"
          "  that workspace, as a program asking the heuristic does; the route\n"
          "  cublaslt gets algorithms within that workspace, or within\n"
          "  --lt-route-workspace BYTES (at most --lt-call's: calls with less).\n");
}
static int parse_int(const char *s, int lo, int *out) {
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (errno || end == s || *end || x < lo || x > INT_MAX) return -1;
  *out = (int)x;
  return 0;
}

/* The whole file, before any CUDA call: a bad line is a usage error. The
 * cuBLAS calls take int dimensions, so every dimension must fit one. */
static std::vector<Problem> read_shapes(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) die("%s: %s\n", path, strerror(errno));
  std::vector<Problem> out;
  char line[512];
  for (int ln = 1; fgets(line, sizeof line, f); ++ln) {
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    long long m, n, k, batch = 1;
    char lay[8], extra[2];
    int got = sscanf(line, "%lld %lld %lld %7s %lld %1s", &m, &n, &k, lay, &batch, extra);
    if (got <= 0) continue; /* blank or comment */
    int ta = -1, tb = -1;
    if ((got == 4 || got == 5) && strlen(lay) == 2) {
      const int a0 = toupper((unsigned char)lay[0]), a1 = toupper((unsigned char)lay[1]);
      ta = a0 == 'N' ? 0 : a0 == 'T' ? 1 : -1;
      tb = a1 == 'N' ? 0 : a1 == 'T' ? 1 : -1;
    }
    if ((got != 4 && got != 5) || ta < 0 || tb < 0 || m < 1 || n < 1 || k < 1 || m > INT_MAX ||
        n > INT_MAX || k > INT_MAX || batch < 1 || batch > INT_MAX)
      die("%s:%d: expected \"m n k layout [batch]\" (dims and batch 1 .. %d, layout NN, TN, NT "
          "or TT)\n", path, ln, INT_MAX);
    Problem p = make_problem(m, n, k, ta, tb);
    if (got == 5) p.batched = true, p.batch = batch;
    out.push_back(p);
  }
  fclose(f);
  if (out.empty()) die("%s: no shapes\n", path);
  return out;
}

/* The current context's identity, through the driver entry points the
 * runtime hands out (the bench links no libcuda): launchers cache their
 * per-context setup by it, and with 0 they redo it on every call. */
static uint64_t current_ctx_id() {
  typedef CUresult (*get_current_fn)(CUcontext *);
  typedef CUresult (*get_id_fn)(CUcontext, unsigned long long *);
  void *fc = nullptr, *fi = nullptr;
  cudaDriverEntryPointQueryResult q1, q2;
  CUcontext ctx = nullptr;
  unsigned long long id = 0;
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fc, 12000, cudaEnableDefault, &q1) !=
          cudaSuccess ||
      cudaGetDriverEntryPointByVersion("cuCtxGetId", &fi, 12000, cudaEnableDefault, &q2) !=
          cudaSuccess ||
      q1 != cudaDriverEntryPointSuccess || q2 != cudaDriverEntryPointSuccess ||
      ((get_current_fn)fc)(&ctx) != CUDA_SUCCESS || !ctx ||
      ((get_id_fn)fi)(ctx, &id) != CUDA_SUCCESS) {
    (void)cudaGetLastError();
    fprintf(stderr, "note: no context id (cuCtxGetId): the launcher redoes its setup per call\n");
    return 0;
  }
  return id;
}

/* Device N made current, or a usage error: no GPU, or no such device. */
static void use_device(int device) {
  int ndev = 0;
  cudaError_t ce = cudaGetDeviceCount(&ndev);
  if (ce != cudaSuccess || ndev == 0)
    die("gemmshim-bench: no CUDA GPU (cudaGetDeviceCount: %s); nothing to measure\n",
        ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
  if (device >= ndev)
    die("--device %d: this machine has %d CUDA device%s\n", device, ndev, ndev == 1 ? "" : "s");
  CK(cudaSetDevice(device));
}

/* The cuBLAS this process runs: major, minor, patch. */
static void cublas_version(int cv[3]) {
  CKB(cublasGetProperty(MAJOR_VERSION, &cv[0]));
  CKB(cublasGetProperty(MINOR_VERSION, &cv[1]));
  CKB(cublasGetProperty(PATCH_LEVEL, &cv[2]));
}

/* --identity: the validators a route table measured here carries (the
 * library compares the same fields, read the same way: identity.c), then
 * the device's UUID, which names its table in the cache folder. Unknown
 * soft values (no NVML) are left out; an unknown hard one is an error. */
static int print_identity(int device) {
  use_device(device);
  gs_rt_identity id;
  if (gs_identity_read(device, &id) != 0) die("device %d: cannot read its properties\n", device);
  int cv[3];
  cublas_version(cv);
  snprintf(id.cublas_version, sizeof id.cublas_version, "%d.%d.%d", cv[0], cv[1], cv[2]);
  for (int v = 0; v < GS_V_COUNT; ++v) {
    const char *val = gs_rt_identity_value(&id, v);
    if (!val[0]) {
      if (v < GS_V_N_HARD) die("device %d: its %s is not known\n", device, gs_rt_validator_name(v));
      continue;
    }
    printf("Validator,%s,%s\n", gs_rt_validator_name(v), val);
  }
  printf("device_uuid,%s\n", id.uuid[0] ? id.uuid : "-");
  /* which libcublas this process loaded: the table is for programs that
   * load the same version (the cublas_version validator) */
  Dl_info where;
  if (dladdr((void *)cublasCreate_v2, &where) && where.dli_fname)
    printf("cublas_path,%s\n", where.dli_fname);
  return 0;
}

/* ------------------------------------------------------- cuBLASLt routes */
/* The functions the route cublaslt runs with, from the cuBLASLt linked
 * here (the shim takes the same ones from the library it finds). */
static gs_lt_fns lt_functions() {
  gs_lt_fns f;
  f.create = cublasLtCreate;
  f.desc_init = cublasLtMatmulDescInit_internal;
  f.desc_set = cublasLtMatmulDescSetAttribute;
  f.layout_init = cublasLtMatrixLayoutInit_internal;
  f.layout_set = cublasLtMatrixLayoutSetAttribute;
  f.algo_init = cublasLtMatmulAlgoInit;
  f.algo_set = cublasLtMatmulAlgoConfigSetAttribute;
  f.algo_get = cublasLtMatmulAlgoConfigGetAttribute;
  f.matmul = cublasLtMatmul;
  return f;
}

struct LtCand {
  gs_lt_algo algo;
  int rank;     /* in the heuristic's order, from 1; 0: given by --lt-algos */
  int rebuilt;  /* 1: Init + the fields gave the heuristic's bytes; 0: raw bytes kept;
                   -1: given */
};

/* cuBLASLt's heuristic for the call's matmul (as gs_lt_build makes it
 * from the described call): its first top results (fewer when it has
 * fewer; none, said, when it has none), with the call's alignment. route:
 * as the route asks, within --lt-route-workspace (none for a BLAS call;
 * where the router allows no reduction in the output type, no such
 * scheme); else as a program asks for a cuBLASLt call of its own, within
 * the call's workspace. */
static std::vector<cublasLtMatmulHeuristicResult_t> lt_heuristic(const Bench &b, const Problem &p,
                                                                 int top, bool route) {
  /* the bench's buffers are cudaMalloc'ed (256-byte aligned): the
   * alignment is that of the leading dimensions, as gs_rt_key_of reckons */
  const int es = b.dtype == CUDA_R_32F ? 4 : 2;
  const uint32_t align = (uint32_t)gs_rt_align_of(
      (uint64_t)p.lda * es | (uint64_t)p.ldb * es | (uint64_t)p.ldc * es | 256);
  const void *dummy = (const void *)(uintptr_t)256;
  gs_gemm g = describe(b, p, dummy, dummy, (void *)dummy);
  gs_kernel_args ka = kernel_args(b, p, dummy, dummy, (void *)dummy);
  const gs_lt_fns f = lt_functions();
  gs_lt_matmul mm;
  CKB((cublasStatus_t)gs_lt_build(&f, b.lt, &g, &ka, nullptr, &mm));
  cublasLtMatmulPreference_t pref;
  CKB(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = route ? b.route_ws_bytes : b.ws_bytes;
  CKB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                           sizeof ws));
  const cublasLtMatmulPreferenceAttributes_t aligns[] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (auto attr : aligns)
    CKB(cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof align));
  /* as the router rules (gs_lt_algo_fits_call): a cuBLASLt call never gets
   * such a scheme, a BLAS call not where its math mode disallows it */
  if (route && (g.is_lt || (g.math_mode & CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION))) {
    const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_MASK & ~(uint32_t)(
        CUBLASLT_REDUCTION_SCHEME_INPLACE | CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
    CKB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                             &mask, sizeof mask));
  }
  std::vector<cublasLtMatmulHeuristicResult_t> res(top);
  int got = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
      b.lt, (cublasLtMatmulDesc_t)&mm.desc, (cublasLtMatrixLayout_t)&mm.layout[0],
      (cublasLtMatrixLayout_t)&mm.layout[1], (cublasLtMatrixLayout_t)&mm.layout[2],
      (cublasLtMatrixLayout_t)&mm.layout[3], pref, top, res.data(), &got);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS) {
    printf("# cuBLASLt has no algorithm for this call (heuristic status %d)\n", (int)st);
    got = 0;
  }
  res.resize(got);
  return res;
}

/* cuBLASLt's top algorithms for the call as the shim would run it (the
 * route's rules). Each is written out as its fields and rebuilt from them:
 * where the rebuilt bytes differ from the heuristic's, the raw bytes are
 * kept. */
static std::vector<LtCand> heuristic_algos(const Bench &b, const Problem &p, int top) {
  const std::vector<cublasLtMatmulHeuristicResult_t> res = lt_heuristic(b, p, top, true);
  const void *dummy = (const void *)(uintptr_t)256;
  const gs_gemm g = describe(b, p, dummy, dummy, (void *)dummy);
  const gs_lt_fns f = lt_functions();
  std::vector<LtCand> out;
  for (size_t i = 0; i < res.size(); ++i) {
    if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
    LtCand c;
    memset(&c, 0, sizeof c);
    CKB((cublasStatus_t)gs_lt_algo_of(&f, b.lt, &res[i].algo, res[i].workspaceSize,
                                      gs_lt_compute_of(&g), g.a_type, g.b_type, g.c_type,
                                      g.d_type, &c.algo));
    c.rebuilt = !c.algo.has_raw;
    c.rank = (int)i + 1;
    out.push_back(c);
  }
  return out;
}

/* --lt-call: the algorithm a program that asks cuBLASLt's heuristic runs
 * the shape with (its first result), into b.app_algo; false when there is
 * none (the shape is not measured). */
static bool pick_app_algo(Bench &b, const Problem &p) {
  const std::vector<cublasLtMatmulHeuristicResult_t> res = lt_heuristic(b, p, 1, false);
  if (res.empty() || res[0].state != CUBLAS_STATUS_SUCCESS) return false;
  b.app_algo = res[0].algo;
  return true;
}

static void run_lt_app(const Bench &b, const Problem &p, const void *A, const void *B, void *C) {
  const gs_gemm g = describe(b, p, A, B, C);
  const gs_kernel_args ka = kernel_args(b, p, A, B, C);
  const gs_lt_fns f = lt_functions();
  gs_lt_matmul mm;
  CKB((cublasStatus_t)gs_lt_build(&f, b.lt, &g, &ka, nullptr, &mm));
  CKB(cublasLtMatmul(b.lt, (cublasLtMatmulDesc_t)&mm.desc, mm.alpha, A,
                     (cublasLtMatrixLayout_t)&mm.layout[0], B, (cublasLtMatrixLayout_t)&mm.layout[1],
                     mm.beta, C, (cublasLtMatrixLayout_t)&mm.layout[2], C,
                     (cublasLtMatrixLayout_t)&mm.layout[3], &b.app_algo, mm.workspace,
                     mm.workspace_size, nullptr));
}

/* --lt-algos FILE: one algorithm's text form a line ('#' comments). */
static std::vector<LtCand> read_algos(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) die("%s: %s\n", path, strerror(errno));
  std::vector<LtCand> out;
  char line[1024];
  for (int ln = 1; fgets(line, sizeof line, f); ++ln) {
    line[strcspn(line, "#\r\n")] = 0;
    if (!line[0]) continue;
    LtCand c;
    memset(&c, 0, sizeof c);
    char why[160];
    if (gs_lt_algo_parse(line, &c.algo, why, sizeof why))
      die("%s:%d: not a cuBLASLt algorithm: %s\n", path, ln, why);
    c.rebuilt = -1;
    out.push_back(c);
  }
  fclose(f);
  if (out.empty()) die("%s: no algorithms\n", path);
  return out;
}

/* --accuracy over the shapes: a line per seed, then per shape the median
 * and worst of ours / cuBLAS over the seeds, against the FP32 tensor-core
 * target (median <= 1.0, worst <= 1.1, for both measures). Returns 1 when
 * a shape misses it (unless report_only), when an error is NaN on either
 * side, when the launcher refused a call its entry takes, or when no shape
 * was measured; 0 otherwise. */
static int run_accuracy(const Bench &b, const std::vector<Problem> &shapes, int nseeds,
                        const char *header, const char *csv, int report_only) {
  FILE *out = nullptr;
  if (csv) {
    out = fopen(csv, "w");
    if (!out) die("%s: %s\n", csv, strerror(errno));
    fputs(header, out);
    fprintf(out, "# accuracy: every output against FP64 (cublasDgemm), seeds 1..%d; elem = the "
                 "worst |D - ref| / (|A| |B|)\n", nseeds);
    fputs("m,n,k,layout,data,seed,ours_err,cublas_err,ratio,ours_elem,cublas_elem,elem_ratio\n",
          out);
  }
  printf("# accuracy: every output against FP64 (cublasDgemm), seeds 1..%d; target: median "
         "<= 1.0 and worst <= 1.1 of ours / cuBLAS, relative Frobenius and elementwise%s\n",
         nseeds, report_only ? " (reported, not enforced: --report-only)" : "");
  printf("%-22s %-3s %4s %10s %10s %7s %10s %10s %7s\n", "shape (m n k)", "lay", "seed",
         "ours err", "cuBLAS err", "ratio", "ours elem", "cuB elem", "ratio");
  int missed = 0, failed = 0, measured = 0;
  for (const Problem &p : shapes) {
    const char *lay = layout_name(p.ta, p.tb);
    char shape[64];
    snprintf(shape, sizeof shape, "%lld %lld %lld", (long long)p.m, (long long)p.n,
             (long long)p.k);
    std::vector<AccRow> rows;
    gs_reason why = GS_R_ROUTED;
    const Outcome o = accuracy_shape(b, p, nseeds, rows, &why);
    if (o != MEASURED) {
      if (o == OUTSIDE)
        printf("%-22s %-3s   outside the kernel's class: %s\n", shape, lay, gs_reason_name(why));
      else
        printf("%-22s %-3s   ** the launcher refused a call its table entry takes **\n", shape,
               lay), failed = 1;
      continue;
    }
    ++measured;
    std::vector<double> ratio, elem_ratio;
    for (size_t s = 0; s < rows.size(); ++s) {
      const AccRow &r = rows[s];
      ratio.push_back(r.ours_err / r.cub_err);
      elem_ratio.push_back(r.ours_elem / r.cub_elem);
      printf("%-22s %-3s %4zu %10.3e %10.3e %7.3f %10.3e %10.3e %7.3f\n", shape, lay, s + 1,
             r.ours_err, r.cub_err, ratio.back(), r.ours_elem, r.cub_elem, elem_ratio.back());
      if (out)
        fprintf(out, "%lld,%lld,%lld,%s,%s,%zu,%.4e,%.4e,%.4f,%.4e,%.4e,%.4f\n", (long long)p.m,
                (long long)p.n, (long long)p.k, lay, dist_names[b.dist], s + 1, r.ours_err,
                r.cub_err, ratio.back(), r.ours_elem, r.cub_elem, elem_ratio.back());
    }
    /* a NaN anywhere (ours, cuBLAS's, or the reference's) is a failure,
     * checked before sorting */
    bool nan = false;
    for (size_t s = 0; s < ratio.size(); ++s)
      if (std::isnan(ratio[s]) || std::isnan(elem_ratio[s])) nan = true;
    const double rmed = nan ? NAN : median(ratio), emed = nan ? NAN : median(elem_ratio);
    const double rmax = nan ? NAN : *std::max_element(ratio.begin(), ratio.end());
    const double emax = nan ? NAN : *std::max_element(elem_ratio.begin(), elem_ratio.end());
    const bool ok = !nan && rmed <= 1.0 && rmax <= 1.1 && emed <= 1.0 && emax <= 1.1;
    printf("# %s %s %s: ratio median %.3f worst %.3f, elem median %.3f worst %.3f: %s\n", shape,
           lay, dist_names[b.dist], rmed, rmax, emed, emax,
           nan  ? "NaN in an error (FAILED)"
           : ok ? "meets median <= 1.0, worst <= 1.1"
                : "MISSES median <= 1.0, worst <= 1.1");
    if (nan) failed = 1;
    if (out)
      fprintf(out, "# %s %s %s: ratio median %.4f worst %.4f, elem median %.4f worst %.4f\n",
              shape, lay, dist_names[b.dist], rmed, rmax, emed, emax);
    if (!ok) missed = 1;
    fflush(stdout);
  }
  if (out) fclose(out);
  if (!measured) {
    printf("FAILED: no shape was measured (none in the kernel's class?)\n");
    return 1;
  }
  return failed || (missed && !report_only) ? 1 : 0;
}

int main(int argc, char **argv) {
  const char *kernel = nullptr, *shapes_path = nullptr, *csv = nullptr, *data = "uniform";
  int iters = 20, warmup = 3, preheat_ms = 0, sm_target = 0, do_list = 0, roofline = 0;
  int after_producer = 0, fixed_bc = 0, long_hold = 0;
  int self = 0, device = 0, do_identity = 0, list_csv = 0, math_mode = -1;
  const char *dtype_arg = nullptr, *lt_algos_path = nullptr, *epilogue_arg = nullptr;
  int lt_top = 0, lt_ws = -1, lt_route_ws = -1, accuracy = 0, nseeds = 3, report_only = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char * {
      if (i + 1 >= argc) usage(), exit(2);
      return argv[++i];
    };
    auto next_int = [&](int lo, int *out) {
      const char *s = next();
      if (parse_int(s, lo, out) != 0)
        die("%s: expected an integer >= %d, got '%s'\n", a.c_str(), lo, s);
    };
    if (a == "--kernel") kernel = next();
    else if (a == "--shapes") shapes_path = next();
    else if (a == "--csv") csv = next();
    else if (a == "--iters") next_int(1, &iters);
    else if (a == "--warmup") next_int(0, &warmup);
    else if (a == "--preheat-ms") next_int(0, &preheat_ms);
    else if (a == "--sm-target") next_int(1, &sm_target);
    else if (a == "--data") data = next();
    else if (a == "--list") do_list = 1;
    else if (a == "--roofline") roofline = 1;
    else if (a == "--after-producer") after_producer = 1;
    else if (a == "--fixed-bc") fixed_bc = 1;
    else if (a == "--long-hold") long_hold = 1;
    else if (a == "--self") self = 1;
    else if (a == "--device") next_int(0, &device);
    else if (a == "--identity") do_identity = 1;
    else if (a == "--list-csv") list_csv = 1;
    else if (a == "--math-mode") next_int(0, &math_mode);
    else if (a == "--dtype") dtype_arg = next();
    else if (a == "--lt-top") next_int(1, &lt_top);
    else if (a == "--lt-algos") lt_algos_path = next();
    else if (a == "--lt-call") next_int(0, &lt_ws);
    else if (a == "--epilogue") epilogue_arg = next();
    else if (a == "--lt-route-workspace") next_int(0, &lt_route_ws);
    else if (a == "--accuracy") accuracy = 1;
    else if (a == "--seeds") next_int(1, &nseeds);
    else if (a == "--report-only") report_only = 1;
    else usage(), exit(2);
  }
  if (do_list) {
    list_table(stdout);
    return 0;
  }
  if (list_csv) {
    /* opt_in: the kernel takes only calls that opted in to FP32 on the
     * tensor cores, which a plain call's log does not show: the
     * GEMMSHIM_FP32 mode that selects it (1 tc, 2 tc-fast) */
    printf("kernel,dtype,opt_in\n");
    for (size_t i = 0; i < gs_n_variants; ++i) {
      const gs_variant *e = gs_variants[i];
      if (e->runs_cublaslt) { /* a line per data type it takes (--dtype) */
        printf("%s,bf16,0\n%s,f16,0\n", e->name, e->name);
        continue;
      }
      const int mode = opt_in_mode(e);
      if (mode < 0) continue; /* nothing selects it: no candidate */
      printf("%s,%s,%d\n", e->name, dtype_csv(e->data_type), mode);
    }
    return 0;
  }
  if (do_identity) return print_identity(device);
  if (!kernel || !shapes_path) usage(), exit(2);
  Bench b{};
  b.v = gs_variant_named(kernel);
  if (!b.v) {
    fprintf(stderr, "unknown kernel '%s'; the kernel table has:\n", kernel);
    list_table(stderr);
    return 2;
  }
  const gs_variant *v = b.v;
  /* the data: the kernel's own, or for the route cublaslt --dtype; and the
   * algorithms that route measures */
  b.dtype = v->data_type;
  if (v->runs_cublaslt) {
    if (!dtype_arg || (strcmp(dtype_arg, "bf16") && strcmp(dtype_arg, "f16")))
      die("%s: --dtype bf16 or f16 names the data\n", v->name);
    b.dtype = strcmp(dtype_arg, "bf16") ? CUDA_R_16F : CUDA_R_16BF;
    if (!lt_top == !lt_algos_path)
      die("%s: --lt-top N (cuBLASLt's heuristic) or --lt-algos FILE names the algorithms\n",
          v->name);
  } else if (dtype_arg || lt_top || lt_algos_path) {
    die("--dtype, --lt-top and --lt-algos are for the route cublaslt\n");
  }
  /* --lt-call: the call as cublasLtMatmul makes it */
  b.lt_call = lt_ws >= 0;
  b.ws_bytes = b.lt_call ? (size_t)lt_ws : 0;
  b.route_ws_bytes = b.ws_bytes;
  if (lt_route_ws >= 0) {
    if (!b.lt_call || lt_route_ws > lt_ws)
      die("--lt-route-workspace goes with --lt-call, at most its bytes\n");
    b.route_ws_bytes = (size_t)lt_route_ws;
  }
  b.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (epilogue_arg) {
    if (!b.lt_call) die("--epilogue goes with --lt-call\n");
    if (!strcmp(epilogue_arg, "bias")) b.epilogue = CUBLASLT_EPILOGUE_BIAS;
    else if (strcmp(epilogue_arg, "default"))
      die("--epilogue %s: expected default or bias\n", epilogue_arg);
  }
  if (b.lt_call && math_mode >= 0) die("--math-mode: a cuBLASLt call has no math mode\n");
  if (b.lt_call && accuracy) die("--accuracy measures the BLAS call (no --lt-call)\n");
  const std::vector<LtCand> given_algos =
      lt_algos_path ? read_algos(lt_algos_path) : std::vector<LtCand>();
  const bool f32 = b.dtype == CUDA_R_32F, f16data = b.dtype == CUDA_R_16F;
  if ((!f32 && !f16data && b.dtype != CUDA_R_16BF) || v->elem_bytes != (f32 ? 4 : 2))
    die("%s: data type %d (%d-byte elements): not one this bench measures\n", v->name,
        b.dtype, v->elem_bytes);
  b.dist = -1;
  for (int d = 0; d < DIST_COUNT; ++d)
    if (!strcmp(data, dist_names[d])) b.dist = d;
  if (b.dist < 0 || (!f32 && b.dist != DIST_UNIFORM))
    die("--data %s: expected uniform, or randn, wide or uniform01 for an FP32 kernel (%s is "
        "%s)\n", data, v->name, dtype_name(b.dtype));
  if (accuracy && (!f32 || v->runs_cublaslt))
    die("--accuracy: FP32 kernels only (%s is %s)\n", v->name, dtype_name(b.dtype));
  if (accuracy && (self || roofline || preheat_ms || sm_target || after_producer || fixed_bc ||
                   long_hold))
    die("--accuracy times nothing: --self, --roofline, --after-producer, --fixed-bc, --long-hold, --preheat-ms and --sm-target do not apply\n");
  if (!accuracy && report_only) die("--report-only goes with --accuracy\n");
  if (sm_target && !v->honours_sm_target)
    die("--sm-target: %s does not honour an SM-count target (its entry says so)\n", v->name);
  b.sm_target = sm_target;
  b.math_mode = pick_math_mode(v);
  /* --math-mode: a 16-bit call as a program made it (PyTorch sets
   * CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION); cuBLAS's handle and
   * the described call both get it */
  if (math_mode >= 0) {
    if (f32) die("--math-mode: FP32 kernels are measured in the mode their class needs\n");
    b.math_mode = math_mode;
  }
  b.roofline = roofline;
  b.after_producer = after_producer;
  b.fixed_bc = fixed_bc;
  b.long_hold = long_hold;
  /* GEMMSHIM_PDL as the shim reads it (a boolean, default on; a value
   * that is not one: a usage error here, where the shim warns) */
  if (const char *pdl = getenv("GEMMSHIM_PDL")) {
    const int on = gs_parse_bool(pdl);
    if (on < 0) die("GEMMSHIM_PDL=\"%s\" is not a boolean\n", pdl);
    b.no_pdl = !on;
  }
  const std::vector<Problem> shapes = read_shapes(shapes_path);
  for (const Problem &p : shapes)
    if (p.batched && (roofline || accuracy))
      die("%s: --roofline and --accuracy take shapes without a batch field\n", shapes_path);

  use_device(device);
  b.device = device;
  b.self = self;
  CK(cudaFree(0)); /* make the context now, for its id */
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, b.device));
  if (v->cc_major && (prop.major != v->cc_major || prop.minor != v->cc_minor))
    die("%s is built for sm_%d%d; device %d (%s) is sm_%d%d\n", v->name, v->cc_major,
        v->cc_minor, b.device, prop.name, prop.major, prop.minor);
  if (sm_target > prop.multiProcessorCount)
    fprintf(stderr, "note: --sm-target %d is above the GPU's %d SMs\n", sm_target,
            prop.multiProcessorCount);
  b.ctx_id = current_ctx_id();
  b.sms = prop.multiProcessorCount;
  if (roofline) {
    CK(cudaMalloc(&b.sink, 16));
    CK(cudaMemset(b.sink, 0, 16));
  }
  if (v->preload && v->preload() != 0)
    die("%s: preload failed: %s\n", v->name, cudaGetErrorString(cudaGetLastError()));
  if (f32 && getenv("NVIDIA_TF32_OVERRIDE"))
    fprintf(stderr, "note: NVIDIA_TF32_OVERRIDE=%s is set (the FP32 reference must be plain "
                    "FP32)\n", getenv("NVIDIA_TF32_OVERRIDE"));
  nvml.open(b.device);
  int drv = 0;
  CK(cudaDriverGetVersion(&drv));
  CKB(cublasCreate(&b.h));
  if (v->runs_cublaslt) {
    const gs_lt_fns lt = lt_functions();
    gs_lt_set_fns(&lt);
    /* the route's handle for this context, as the shim's loader makes it */
    if (gs_lt_prepare(b.ctx_id) != 0) die("cublaslt: no cuBLASLt handle could be made\n");
  }
  if (v->runs_cublaslt || b.lt_call) CKB(cublasLtCreate(&b.lt));
  if (b.ws_bytes) CK(cudaMalloc(&b.ws, b.ws_bytes));
  if (b.lt_call && b.epilogue == CUBLASLT_EPILOGUE_BIAS) {
    /* one bias for every shape: the largest m */
    int64_t m_max = 1;
    for (const Problem &p : shapes) m_max = std::max(m_max, p.m);
    CK(cudaMalloc(&b.bias, (size_t)m_max * (f32 ? 4 : 2)));
    if (f32) fill_data((float *)b.bias, (size_t)m_max, 77, b.dist);
    else if (f16data) fill_data((f16 *)b.bias, (size_t)m_max, 77, b.dist);
    else fill_data((bf16 *)b.bias, (size_t)m_max, 77, b.dist);
  }
  CKB(cublasSetMathMode(b.h, math_mode >= 0 ? (cublasMath_t)math_mode : CUBLAS_DEFAULT_MATH));
  if (sm_target) CKB(cublasSetSmCountTarget(b.h, sm_target));
  int cv[3];
  cublas_version(cv);
  char date[64];
  time_t now = time(nullptr);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  char lt_call_text[96] = "";
  if (b.lt_call)
    snprintf(lt_call_text, sizeof lt_call_text, " (workspace %zu bytes, epilogue %s)", b.ws_bytes,
             b.epilogue == CUBLASLT_EPILOGUE_BIAS ? "bias" : "default");
  char route_text[160] = "# ours: cuBLASLt with each algorithm (lt_algo), within the call's "
                         "workspace\n";
  if (b.route_ws_bytes < b.ws_bytes)
    snprintf(route_text, sizeof route_text, "# ours: cuBLASLt with each algorithm (lt_algo), "
             "within %zu bytes of workspace (--lt-route-workspace)\n", b.route_ws_bytes);
  char header[2048];
  snprintf(header, sizeof header,
           "# device: %s\n# sm_count: %d\n# driver: %s (CUDA driver API %d)\n"
           "# cublas: %d.%d.%d\n# date: %s\n# kernel: %s\n# sm_count_target: %d\n"
           "# data: %s\n# call: %s%s, math mode %d; reference: %s%s\n"
           "# error bound: ours <= %g x cuBLAS + %g (vs FP64)\n%s%s",
           prop.name, prop.multiProcessorCount, nvml.driver, drv, cv[0], cv[1], cv[2], date,
           v->name, sm_target, dist_names[b.dist],
           b.lt_call ? "cublasLtMatmul" : f32 ? "cublasSgemm_v2" : "cublasGemmEx", lt_call_text,
           b.math_mode,
           b.lt_call ? (f32       ? "cublasLtMatmul FP32, CUBLAS_COMPUTE_32F"
                        : f16data ? "cublasLtMatmul FP16, CUBLAS_COMPUTE_32F"
                                  : "cublasLtMatmul BF16, CUBLAS_COMPUTE_32F")
           : f32     ? "cublasSgemm, CUBLAS_DEFAULT_MATH"
           : f16data ? "cublasGemmEx FP16, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP"
                     : "cublasGemmEx BF16, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP",
           b.lt_call ? " with cuBLASLt's first heuristic algorithm within the workspace" : "",
           v->err_vs_cublas, v->err_floor,
           self ? "# self: \"ours\" is cuBLAS again (--self): the ratio's spread is the method's noise\n" : "",
           !v->runs_cublaslt ? ""
           : b.lt_call ? route_text
                       : "# ours: cuBLASLt with each algorithm (lt_algo), zero-workspace "
                         "algorithms (the shim's rule for BLAS calls)\n");
  if (roofline) {
    const size_t len = strlen(header);
    snprintf(header + len, sizeof header - len,
             "# roofline: ceiling = a read of the weight's elements (op(A)'s m*k, op(B)'s n*k "
             "where n > m; the fastest of %zu "
             "launch configurations per weight size), floor = an empty kernel; both timed "
             "as the GEMMs; gbps = weight bytes / time, pct_ceiling = ceiling / time\n",
             read_cfgs().size());
  }
  /* how our side launched: a route measured so holds only where the
   * kernel launches so (the CSV's launch column, a route table's) */
  const bool ours_pdl = !b.self && !b.no_pdl && v->launches_pdl && v->launches_pdl();
  if (b.no_pdl) {
    const size_t len = strlen(header);
    snprintf(header + len, sizeof header - len,
             "# GEMMSHIM_PDL=0: kernels launched plainly, never with programmatic dependent "
             "launch\n");
  }
  bool any_batch = false;
  for (const Problem &p : shapes) any_batch |= p.batched;
  if (any_batch) {
    const size_t len = strlen(header);
    snprintf(header + len, sizeof header - len,
             "# a shape with a batch (xN): the call is %s of N packed items (with --lt-call: "
             "the batch in its layouts); errors are the worse of its first and last item\n",
             b.lt_call ? "cublasLtMatmul" : f32 ? "cublasSgemmStridedBatched"
                                               : "cublasGemmStridedBatchedEx");
  }
  if (fixed_bc || long_hold) {
    const size_t len = strlen(header);
    snprintf(header + len, sizeof header - len, "#%s%s\n",
             fixed_bc ? " fixed-bc: only the weight rotates; every call uses one x and C;" : "",
             long_hold ? " long-hold: samples held 4x the host's queueing time + 500 us" : "");
  }
  if (after_producer) {
    const size_t len = strlen(header);
    snprintf(header + len, sizeof header - len,
             "# after-producer: every time is a producer kernel (rewrites op(B), never triggers "
             "its dependents) and then the call%s\n",
             roofline ? "; the floor is the producer and an empty kernel; the floor and the "
                        "ceiling launched with programmatic dependent launch" : "");
  }
  fputs(header, stdout);
  fflush(stdout);

  if (accuracy) {
    const int rc = run_accuracy(b, shapes, nseeds, header, csv, report_only);
    cublasDestroy(b.h);
    return rc;
  }
  FILE *out = nullptr;
  if (csv) {
    out = fopen(csv, "w");
    if (!out) die("%s: %s\n", csv, strerror(errno));
    fputs(header, out);
    fputs("m,n,k,layout,ours_tflops,cublas_tflops,ratio,ours_err,cublas_err,sm_mhz,power_w,"
          "ours_us,cublas_us,samples,reps,buffer_sets",
          out);
    fputs(roofline ? ",dtype,ceiling_us,floor_us,ours_gbps,cublas_gbps,ours_pct_ceiling,"
                     "cublas_pct_ceiling"
                   : "",
          out);
    fputs(v->runs_cublaslt ? ",ours_host_us,cublas_host_us,lt_rank,lt_rebuilt,lt_within_bound,lt_algo"
                           : "",
          out);
    fputs(",launch,batch\n", out);
    fflush(out);
  }
  if (preheat_ms > 0) preheat(b, preheat_ms);

  printf("%-22s %-3s %9s %9s %7s %10s %10s %6s %5s", "shape (m n k)", "lay", "ours TF/s",
         "cuBLAS", "ratio", "ours err", "cuBLAS err", "MHz", "W");
  if (roofline)
    printf(" %-5s %8s %8s %9s %9s %7s %7s", "dtype", "ceil us", "floor us", "ours GB/s",
           "cuB GB/s", "ours %c", "cuB %c");
  printf("\n");
  int bad = 0, measured = 0;
  size_t runs = 0;
  for (const Problem &p : shapes) {
    const char *lay = layout_name(p.ta, p.tb);
    char shape[64];
    snprintf(shape, sizeof shape, "%lld %lld %lld", (long long)p.m, (long long)p.n,
             (long long)p.k);
    if (p.batched)
      snprintf(shape + strlen(shape), sizeof shape - strlen(shape), " x%lld", (long long)p.batch);
    if (b.lt_call && !pick_app_algo(b, p)) {
      printf("%-22s %-3s   cuBLASLt has no algorithm for the call (not timed)\n", shape, lay);
      fflush(stdout);
      continue;
    }
    /* what is measured on this shape: the kernel once, or the route
     * cublaslt with each algorithm */
    std::vector<LtCand> algos(1);
    if (v->runs_cublaslt) algos = lt_top ? heuristic_algos(b, p, lt_top) : given_algos;
    for (const LtCand &cand : algos) {
      b.algo = v->runs_cublaslt ? &cand.algo : nullptr;
      char algo_text[GS_LT_ALGO_TEXT] = "";
      if (b.algo) gs_lt_algo_format(b.algo, algo_text);
      ++runs;
      Row r;
      gs_reason why = GS_R_ROUTED;
      Outcome o = f32       ? bench_shape<float>(b, p, iters, warmup, r, &why)
                  : f16data ? bench_shape<f16>(b, p, iters, warmup, r, &why)
                            : bench_shape<bf16>(b, p, iters, warmup, r, &why);
      if (o != MEASURED) {
        if (o == OUTSIDE)
          printf("%-22s %-3s   outside the kernel's class: %s (not timed)%s%s\n", shape, lay,
                 gs_reason_name(why), b.algo ? "  lt_algo " : "", algo_text);
        else if (b.algo) /* cuBLASLt's own refusal: that algorithm is no candidate */
          printf("%-22s %-3s   cuBLASLt refused the algorithm (not timed)  lt_algo %s\n", shape,
                 lay, algo_text);
        else
          printf("%-22s %-3s   ** the launcher refused a call its table entry takes (not timed)"
                 " **\n", shape, lay), bad = 1;
        fflush(stdout);
        continue;
      }
      ++measured;
      /* NaN on either side fails too */
      const bool ok = r.ours_err <= v->err_vs_cublas * r.cub_err + v->err_floor;
      char path[32] = "";
      if (r.path >= 0) snprintf(path, sizeof path, "  path %d", r.path);
      /* --roofline: the weight's bytes over each time, and the ceiling's
       * share of each time */
      const double wbytes = weight_elems(p) * v->elem_bytes;
      const double ours_gbps = wbytes / r.ours_us * 1e-3, cub_gbps = wbytes / r.cub_us * 1e-3;
      const double ours_pct = r.ceil_us / r.ours_us * 100, cub_pct = r.ceil_us / r.cub_us * 100;
      printf("%-22s %-3s %9.2f %9.2f %7.3f %10.3e %10.3e %6d %5d", shape, lay, r.ours_tf,
             r.cub_tf, r.ratio, r.ours_err, r.cub_err, r.mhz, r.watts);
      if (roofline)
        printf(" %-5s %8.2f %8.2f %9.1f %9.1f %7.1f %7.1f", dtype_csv(b.dtype), r.ceil_us,
               r.floor_us, ours_gbps, cub_gbps, ours_pct, cub_pct);
      if (b.algo) printf("  #%d%s %s", cand.rank, cand.rebuilt == 0 ? " raw" : "", algo_text);
      printf("%s%s\n", path, ok ? "" : "  ** ERROR above the bound vs FP64 **");
      fflush(stdout);
      if (out) {
        fprintf(out, "%lld,%lld,%lld,%s,%.3f,%.3f,%.5f,%.4e,%.4e,%d,%d,%.3f,%.3f,%d,%d,%d",
                (long long)p.m, (long long)p.n, (long long)p.k, lay, r.ours_tf, r.cub_tf, r.ratio,
                r.ours_err, r.cub_err, r.mhz, r.watts, r.ours_us, r.cub_us, r.samples, r.reps,
                r.nsets);
        if (roofline)
          fprintf(out, ",%s,%.2f,%.2f,%.1f,%.1f,%.1f,%.1f", dtype_csv(b.dtype), r.ceil_us,
                  r.floor_us, ours_gbps, cub_gbps, ours_pct, cub_pct);
        if (b.algo)
          fprintf(out, ",%.2f,%.2f,%d,%d,%d,%s", r.ours_host_us, r.cub_host_us, cand.rank,
                  cand.rebuilt, (int)ok, algo_text);
        /* batch: the strided-batched call's items, "-" for the plain entry */
        if (p.batched) fprintf(out, ",%s,%lld\n", ours_pdl ? "pdl" : "plain", (long long)p.batch);
        else fprintf(out, ",%s,-\n", ours_pdl ? "pdl" : "plain");
        fflush(out);
      }
      if (!ok) bad = 1;
    }
  }
  if (out) fclose(out);
  a_pool.clear();
  if (b.sink) CK(cudaFree(b.sink));
  cublasDestroy(b.h);
  if (b.lt) cublasLtDestroy(b.lt);
  if (b.ws) CK(cudaFree(b.ws));
  if (b.bias) CK(cudaFree(b.bias));
  if (v->runs_cublaslt)
    printf("# %d of %zu algorithm runs measured over %zu shapes\n", measured, runs, shapes.size());
  else
    printf("# %d of %zu shapes measured\n", measured, shapes.size());
  if (bad) printf("FAILED: see lines marked above\n");
  return bad ? 1 : 0;
}
