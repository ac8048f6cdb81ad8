/* The decode kernel's TN layout fed through a shared-memory ring: a
 * producer warp copies each stage (32 weight rows x SK k, and the same k of
 * x) with cp.async.bulk, paced by mbarriers, while four consumer warps read
 * the stage from shared memory into mma.sync fragments (the k assignment of
 * the shipped kernel). The question: does a continuous stream of bulk
 * copies (one CTA per SM, STAGES * stage bytes in flight) get nearer the
 * same-size read ceiling than the shipped kernel's register rounds, on the
 * 8-34 MB weights where cuBLAS is at 31-79% of it?
 *
 * Timed beside cuBLAS and the shipped kernel (GPU-bound: a spin kernel
 * holds the stream while the host queues 20 calls), weight copies rotated
 * past the L2, with the launch floor and the read ceiling. Each ring
 * configuration's result is compared with cuBLAS's (relative Frobenius
 * difference) and with itself on a second run (bitwise).
 *   ring [m n k ...]   (TN; default: a built-in list)
 * Exits 77 without a GPU. */
#include "../../kernels/gemm_decode.cu"
#include "../../kernels/sm90_ptx.cuh"
#include "../../kernels/sm90_host.h"

#include <cublas_v2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)

namespace ring {
using namespace gs_sm90;
using gs_decode::Params;

constexpr int kRows = 32;            /* weight rows per CTA (two m16 tiles a warp) */
constexpr int kConsumers = 4;        /* consumer warps; warp 4 is the producer */
constexpr int kThreads = (kConsumers + 1) * 32;

/* A row of a stage: SK k of one weight row or one x column, padded by 64
 * bytes so the two rows a quarter-warp reads fall in different banks. */
template <int SK> __host__ __device__ constexpr int pitch() { return SK * 2 + 64; }
template <int SK, int NT> __host__ __device__ constexpr int stage_bytes() { return (kRows + 8 * NT) * pitch<SK>(); }

__device__ __forceinline__ void bulk_g2s(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
      ::"r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ uint4 lds128(const char *p) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(smem_u32(p)) : "memory");
  return v;
}

/* The CTA's four consumer sums and the cluster's ranks, then the epilogue,
 * as the shipped kernel (all threads of the CTA call it). */
template <typename T, int NT>
__device__ __forceinline__ void finish(float (&acc)[2][NT][4], float (&red)[2][8 * NT * (kRows + 1)],
                                       const Params &p, int rank, int row0, int cols_valid) {
  constexpr int MT = 2, LD = kRows + 1;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int split = p.split;
  /* The CTA's sum, (w0 + w2) + (w1 + w3), ends in red[0] (the shipped
   * kernel's order). */
  auto cell = [&](int t, int nt, int e) {
    return (nt * 8 + 2 * q + (e & 1)) * LD + gs_decode::row_of<false>(0, t, e, g);
  };
  auto put = [&](float *buf) {
#pragma unroll
    for (int t = 0; t < MT; ++t)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) buf[cell(t, nt, e)] = acc[t][nt][e];
  };
  auto add = [&](const float *buf) {
#pragma unroll
    for (int t = 0; t < MT; ++t)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[t][nt][e] += buf[cell(t, nt, e)];
  };
  if (warp == 2 || warp == 3) put(red[warp - 2]);
  __syncthreads();
  if (warp < 2) add(red[warp]);
  __syncthreads();
  if (warp == 1) put(red[0]);
  __syncthreads();
  if (warp == 0) { add(red[0]); put(red[0]); }

  float alpha = p.alpha, beta = p.beta;
  if (p.alpha_dev) alpha = *p.alpha_dev;
  if (p.beta_dev) beta = *p.beta_dev;
  int r_lo = 0, r_hi = kRows;
  if (split > 1) {
    cg::this_cluster().sync();
    r_lo = rank * kRows / split;
    r_hi = (rank + 1) * kRows / split;
  } else {
    __syncthreads();
  }
  const int rows = r_hi - r_lo;
  T *D = static_cast<T *>(p.D);
  const T *Cm = reinterpret_cast<const T *>(p.C);
  const T *bias = reinterpret_cast<const T *>(p.bias);
  for (int e = threadIdx.x; e < rows * cols_valid; e += kThreads) {
    const int j = e / rows, i = r_lo + e % rows;
    const int row = row0 + i;
    if (row >= p.m) continue;
    float v;
    if (split > 1) {
      cg::cluster_group cluster = cg::this_cluster();
      float part[gs_decode::kMaxCluster];
#pragma unroll
      for (int r = 0; r < gs_decode::kMaxCluster; ++r)
        part[r] = r < split ? cluster.map_shared_rank(red[0], r)[j * LD + i] : 0.f;
      v = part[0];
#pragma unroll
      for (int r = 1; r < gs_decode::kMaxCluster; ++r)
        if (r < split) v += part[r];
    } else {
      v = red[0][j * LD + i];
    }
    v = __fmul_rn(alpha, v);
    if (beta != 0.f) v = fmaf(beta, gs_decode::Elem<T>::to_f(Cm[row + (int64_t)j * p.ldc]), v);
    if (bias) v = __fadd_rn(v, gs_decode::Elem<T>::to_f(bias[row]));
    D[row + (int64_t)j * p.ldd] = gs_decode::Elem<T>::from_f(v);
  }
  if (split > 1) cg::this_cluster().sync();
}

template <typename T, int NT, int SK>
__global__ void __launch_bounds__(kThreads, 1) ring_kernel(const Params p, int stages) {
  constexpr int MT = 2, COLS = 8 * NT, LD = kRows + 1, P = pitch<SK>(), SB = stage_bytes<SK, NT>();
  constexpr int STEPS = SK / 32;     /* 32-k steps per stage, STEPS / 4 per consumer warp */
  static_assert(STEPS % kConsumers == 0, "each consumer warp takes whole steps");
  extern __shared__ __align__(128) char ring_smem[];
  __shared__ uint64_t full[32], empty[32];
  __shared__ float red[2][COLS * LD];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int split = p.split;
  const int rank = (int)(blockIdx.x % (unsigned)split);
  const int row0 = (int)(blockIdx.x / (unsigned)split) * kRows;
  const int rows_valid = min(kRows, p.m - row0);
  const int cols_valid = min(COLS, p.n);
  const int chunks = p.k / SK;                          /* whole stages along k */
  const int mine = chunks > rank ? (chunks - rank + split - 1) / split : 0;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) { mbar_init(&full[s], 1); mbar_init(&empty[s], kConsumers); }
    fence_mbarrier_init();
  }
  /* rows past m and columns past n are never copied: zeros, once */
  if (rows_valid < kRows || cols_valid < COLS)
    for (int s = 0; s < stages; ++s)
      for (int r = 0; r < kRows + COLS; ++r) {
        if (r < kRows ? r < rows_valid : r - kRows < cols_valid) continue;
        for (int b = threadIdx.x * 16; b < SK * 2; b += kThreads * 16)
          *reinterpret_cast<uint4 *>(ring_smem + s * SB + r * P + b) = make_uint4(0, 0, 0, 0);
      }
  __syncthreads();

  float acc[MT][NT][4];
#pragma unroll
  for (int t = 0; t < MT; ++t)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[t][nt][e] = 0.f;

  if (warp == kConsumers) {
    const uint32_t bytes = (uint32_t)(rows_valid + cols_valid) * SK * 2;
    for (int i = 0; i < mine; ++i) {
      const int s = i % stages, u = i / stages;
      mbar_wait(&empty[s], (u & 1) ^ 1);
      if (lane == 0) mbar_arrive_expect_tx(&full[s], bytes);
      __syncwarp();
      const int64_t k0 = (int64_t)(rank + i * split) * SK;
      char *st = ring_smem + s * SB;
      if (lane < rows_valid) bulk_g2s(st + lane * P, p.A + (int64_t)(row0 + lane) * p.lda + k0, SK * 2, &full[s]);
      if (lane < cols_valid) bulk_g2s(st + (kRows + lane) * P, p.B + (int64_t)lane * p.ldb + k0, SK * 2, &full[s]);
    }
  } else {
    for (int i = 0; i < mine; ++i) {
      const int s = i % stages, u = i / stages;
      mbar_wait(&full[s], u & 1);
      const char *st = ring_smem + s * SB;
      gs_decode::StepTN<MT, NT> x[STEPS / kConsumers];
#pragma unroll
      for (int j = 0; j < STEPS / kConsumers; ++j) {
        const int kb = ((warp * (STEPS / kConsumers) + j) * 32 + 8 * q) * 2;
#pragma unroll
        for (int t = 0; t < MT; ++t)
#pragma unroll
          for (int h = 0; h < 2; ++h) x[j].a[t][h] = lds128(st + (16 * t + 8 * h + g) * P + kb);
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) x[j].b[nt] = lds128(st + (kRows + nt * 8 + g) * P + kb);
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty[s]);
#pragma unroll
      for (int j = 0; j < STEPS / kConsumers; ++j) gs_decode::mma_tn<T, MT, NT>(acc, x[j]);
    }
    /* k past the last whole stage: 32-k steps from global, dealt to the
     * split * 4 consumer slices */
    const int steps = (p.k + 31) / 32, full_steps = p.k / 32;
    for (int st = chunks * STEPS + rank * kConsumers + warp; st < steps; st += split * kConsumers) {
      gs_decode::StepTN<MT, NT> s;
      if (st < full_steps) gs_decode::load_tn<MT, NT, false>(s, p, row0, st * 32, g, q);
      else gs_decode::load_tn<MT, NT, true>(s, p, row0, st * 32, g, q);
      gs_decode::mma_tn<T, MT, NT>(acc, s);
    }
  }

  finish<T, NT>(acc, red, p, rank, row0, cols_valid);
}

/* The same with the weight stage as one 2-D TMA box (SK k x 32 rows, no
 * swizzle, rows SK * 2 bytes apart; rows past m and k past the end are
 * zero-filled by the copy), x read by the consumers from global memory (hot
 * in L2), issued before the wait for the stage. */
template <typename T, int NT, int SK>
__global__ void __launch_bounds__(kThreads, 1)
    ring2d_kernel(const __grid_constant__ CUtensorMap tmap, const Params p, int stages) {
  constexpr int MT = 2, COLS = 8 * NT, LD = kRows + 1, P = SK * 2, SB = kRows * P;
  constexpr int STEPS = SK / 32, WS = STEPS / kConsumers;
  static_assert(STEPS % kConsumers == 0, "each consumer warp takes whole steps");
  extern __shared__ __align__(128) char ring_smem[];
  __shared__ uint64_t full[32], empty[32];
  __shared__ float red[2][COLS * LD];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int split = p.split;
  const int rank = (int)(blockIdx.x % (unsigned)split);
  const int row0 = (int)(blockIdx.x / (unsigned)split) * kRows;
  const int cols_valid = min(COLS, p.n);
  const int chunks = (p.k + SK - 1) / SK;
  const int mine = chunks > rank ? (chunks - rank + split - 1) / split : 0;

  if (threadIdx.x == 0) {
    prefetch_tensormap(&tmap);
    for (int s = 0; s < stages; ++s) { mbar_init(&full[s], 1); mbar_init(&empty[s], kConsumers); }
    fence_mbarrier_init();
  }
  __syncthreads();

  float acc[MT][NT][4];
#pragma unroll
  for (int t = 0; t < MT; ++t)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[t][nt][e] = 0.f;

  if (warp == kConsumers) {
    if (lane == 0)
      for (int i = 0; i < mine; ++i) {
        const int s = i % stages, u = i / stages;
        mbar_wait(&empty[s], (u & 1) ^ 1);
        mbar_arrive_expect_tx(&full[s], SB);
        tma_load_2d(ring_smem + s * SB, &tmap, &full[s], (rank + i * split) * SK, row0);
      }
  } else {
    for (int i = 0; i < mine; ++i) {
      const int s = i % stages, u = i / stages;
      const int64_t k0 = (int64_t)(rank + i * split) * SK;
      gs_decode::StepTN<MT, NT> x[WS];
#pragma unroll
      for (int j = 0; j < WS; ++j) {
        const int64_t kcol = k0 + (warp * WS + j) * 32 + 8 * q;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const int col = nt * 8 + g;
          const uint16_t *src = p.B + (int64_t)col * p.ldb + kcol;
          if (kcol + 8 <= p.k) x[j].b[nt] = gs_decode::ld_x16(src, col < cols_valid);
          else if (col < cols_valid) x[j].b[nt] = gs_decode::ld_guard8(src, p.k - kcol);
          else x[j].b[nt] = make_uint4(0, 0, 0, 0);
        }
      }
      mbar_wait(&full[s], u & 1);
      const char *st = ring_smem + s * SB;
#pragma unroll
      for (int j = 0; j < WS; ++j) {
        const int kb = ((warp * WS + j) * 32 + 8 * q) * 2;
#pragma unroll
        for (int t = 0; t < MT; ++t)
#pragma unroll
          for (int h = 0; h < 2; ++h) x[j].a[t][h] = lds128(st + (16 * t + 8 * h + g) * P + kb);
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty[s]);
#pragma unroll
      for (int j = 0; j < WS; ++j) gs_decode::mma_tn<T, MT, NT>(acc, x[j]);
    }
  }
  finish<T, NT>(acc, red, p, rank, row0, cols_valid);
}

/* Split K across a cluster while the grid stays within one CTA per SM and
 * every rank keeps at least two stages. */
static int split_for(int64_t m, int64_t k, int sk, int sms) {
  const int64_t tiles = (m + kRows - 1) / kRows, chunks = k / sk;
  int s = 1;
  while (s < gs_decode::kMaxCluster && tiles * 2 * s <= sms && chunks >= 4 * s) s *= 2;
  return s;
}

template <typename T, int NT, int SK>
static cudaError_t launch(Params p, int stages, int sms, cudaStream_t stream) {
  const size_t smem = (size_t)stages * stage_bytes<SK, NT>();
  static size_t smem_set = 0;
  if (smem > smem_set) {
    cudaError_t e = cudaFuncSetAttribute(ring_kernel<T, NT, SK>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
    smem_set = smem;
  }
  p.split = split_for(p.m, p.k, SK, sms);
  const int64_t tiles = ((int64_t)p.m + kRows - 1) / kRows;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)(tiles * p.split));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  if (p.split > 1) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)p.split;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&cfg, ring_kernel<T, NT, SK>, p, stages);
}
template <typename T, int NT, int SK>
static cudaError_t launch2d(Params p, int stages, int sms, cudaStream_t stream) {
  const size_t smem = (size_t)stages * kRows * SK * 2;
  static size_t smem_set = 0;
  if (smem > smem_set) {
    cudaError_t e = cudaFuncSetAttribute(ring2d_kernel<T, NT, SK>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
    smem_set = smem;
  }
  PFN_cuTensorMapEncodeTiled_v12000 enc = get_encode();
  if (!enc) return cudaErrorNotSupported;
  CUtensorMap tmap;
  const cuuint64_t dims[2] = {(cuuint64_t)p.k, (cuuint64_t)p.m};
  const cuuint64_t strides[1] = {(cuuint64_t)p.lda * 2};
  const cuuint32_t box[2] = {(cuuint32_t)SK, (cuuint32_t)kRows};
  const cuuint32_t estrides[2] = {1, 1};
  if (enc(&tmap, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<uint16_t *>(p.A), dims, strides, box, estrides,
          CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
    return cudaErrorInvalidValue;
  const int64_t tiles = ((int64_t)p.m + kRows - 1) / kRows;
  const int64_t chunks = ((int64_t)p.k + SK - 1) / SK;
  /* split while the grid still fits one CTA per SM and every rank keeps four stages */
  int s = 1;
  while (s < gs_decode::kMaxCluster && tiles * 2 * s <= sms && chunks >= 4 * s) s *= 2;
  p.split = s;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)(tiles * p.split));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  if (p.split > 1) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)p.split;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&cfg, ring2d_kernel<T, NT, SK>, tmap, p, stages);
}
/* ---- linear: each warp reads its share of the CTA's rows front to back --
 * The read ceiling is reached by a block-partitioned read that walks each
 * CTA's contiguous block linearly (block_linear_read below), which the
 * fragment layout of mma cannot do: a fragment wants 16 rows at one k. For
 * few columns the tensor cores are not needed: each lane loads 16 bytes (8
 * k) of a row, 512 contiguous bytes per warp load, and does 8 * n FP32 FMA
 * against x (hot in L1). The CTA owns consecutive rows (m split evenly over
 * the grid); its rows x 256-k segments, in memory order, are split evenly
 * over the warps; a warp sums a row's lanes by shuffles when it leaves the
 * row and puts the partial in shared memory; row sums add the warps'
 * partials in warp order. No atomics: the same bits on every run. */
constexpr int kLinWarps = 16, kLinThreads = kLinWarps * 32, kLinMaxRows = 64, kLinUnroll = 8;

template <typename T> __device__ __forceinline__ void widen2(uint32_t w, float &lo, float &hi);
template <> __device__ __forceinline__ void widen2<__nv_bfloat16>(uint32_t w, float &lo, float &hi) {
  lo = __uint_as_float(w << 16);
  hi = __uint_as_float(w & 0xffff0000u);
}
template <> __device__ __forceinline__ void widen2<__half>(uint32_t w, float &lo, float &hi) {
  const __half2 h = *reinterpret_cast<const __half2 *>(&w);
  lo = __low2float(h);
  hi = __high2float(h);
}

template <typename T, int N, bool kMma>
__global__ void __launch_bounds__(kLinThreads, 1) linear_kernel(const Params p, int grid_rows_split) {
  __shared__ float part[kLinMaxRows][kLinWarps][N];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int G = (int)gridDim.x, b = (int)blockIdx.x;
  const int r0 = (int)((int64_t)b * p.m / G), r1 = (int)((int64_t)(b + 1) * p.m / G);
  const int R = r1 - r0;
  const int segs = (p.k + 255) / 256;
  const int units = R * segs;
  const int u0 = (int)((int64_t)warp * units / kLinWarps), u1 = (int)((int64_t)(warp + 1) * units / kLinWarps);
  (void)grid_rows_split;
  for (int i = threadIdx.x; i < kLinMaxRows * kLinWarps * N; i += kLinThreads) (&part[0][0][0])[i] = 0.f;
  __syncthreads();

  float acc[N];
#pragma unroll
  for (int c = 0; c < N; ++c) acc[c] = 0.f;
  float dacc[(N + 1) / 2][4];
#pragma unroll
  for (int j = 0; j < (N + 1) / 2; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) dacc[j][e] = 0.f;
  /* 8 k of token c at kk (zeros past n and past k) */
  auto xload = [&](int c, int kk) -> uint4 {
    const uint16_t *xs = p.B + (int64_t)c * p.ldb + kk;
    if (kk + 8 <= p.k) return gs_decode::ld_x16(xs, c < p.n);
    if (c < p.n && kk < p.k) return gs_decode::ld_guard8(xs, p.k - kk);
    return make_uint4(0, 0, 0, 0);
  };
  /* (row, segment) of the next unit, advanced without division */
  int row = segs ? u0 / segs : 0, seg = u0 - row * segs;
  for (int ub = u0; ub < u1; ub += kLinUnroll) {
    uint4 w[kLinUnroll];
    int rr[kLinUnroll + 1], kq[kLinUnroll];
#pragma unroll
    for (int u = 0; u < kLinUnroll; ++u) {
      rr[u] = row;
      kq[u] = seg * 256 + 8 * lane;
      const bool on = ub + u < u1 && kq[u] + 8 <= p.k;
      w[u] = gs_decode::ld_stream(p.A + (int64_t)(r0 + row) * p.lda + kq[u], on);
      if (++seg == segs) { seg = 0; ++row; }
    }
    rr[kLinUnroll] = row;
#pragma unroll
    for (int u = 0; u < kLinUnroll; ++u) {
      if (ub + u >= u1) break;
      const int kk = kq[u];
      if (kk < p.k && kk + 8 > p.k)   /* k % 8 != 0: the row's last 8 */
        w[u] = gs_decode::ld_guard8(p.A + (int64_t)(r0 + rr[u]) * p.lda + kk, p.k - kk);
      if constexpr (kMma) {
        /* B column g = this row's 32 k loaded by lanes 4g..4g+3 (slots as
         * the lane's words), A rows g and g + 8 = tokens 2j, 2j + 1 at the
         * same k: the diagonal D[g][g], D[g + 8][g] is the row's partial
         * over those 32 k. */
#pragma unroll
        for (int j = 0; j < (N + 1) / 2; ++j) {
          uint4 x0 = xload(2 * j, kk), x1 = xload(2 * j + 1, kk);
          const uint32_t a0[4] = {x0.x, x1.x, x0.y, x1.y}, a1[4] = {x0.z, x1.z, x0.w, x1.w};
          gs_decode::Elem<T>::mma(dacc[j], a0, w[u].x, w[u].y);
          gs_decode::Elem<T>::mma(dacc[j], a1, w[u].z, w[u].w);
        }
      } else {
        float a[8];
        widen2<T>(w[u].x, a[0], a[1]); widen2<T>(w[u].y, a[2], a[3]);
        widen2<T>(w[u].z, a[4], a[5]); widen2<T>(w[u].w, a[6], a[7]);
#pragma unroll
        for (int c = 0; c < N; ++c) {
          const uint4 xv = xload(c, kk);
          float x[8];
          widen2<T>(xv.x, x[0], x[1]); widen2<T>(xv.y, x[2], x[3]);
          widen2<T>(xv.z, x[4], x[5]); widen2<T>(xv.w, x[6], x[7]);
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[c] = fmaf(a[e], x[e], acc[c]);
        }
      }
      if (ub + u + 1 == u1 || rr[u + 1] != rr[u]) {
        if constexpr (kMma) {
          const int g = lane >> 2, q = lane & 3;
          const bool diag = q == (g >> 1);
#pragma unroll
          for (int j = 0; j < (N + 1) / 2; ++j) {
            acc[2 * j] = diag ? dacc[j][g & 1] : 0.f;
            if (2 * j + 1 < N) acc[2 * j + 1] = diag ? dacc[j][2 + (g & 1)] : 0.f;
#pragma unroll
            for (int e = 0; e < 4; ++e) dacc[j][e] = 0.f;
          }
        }
#pragma unroll
        for (int c = 0; c < N; ++c) {
          float v = acc[c];
#pragma unroll
          for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
          if (lane == 0) part[rr[u]][warp][c] = v;
          acc[c] = 0.f;
        }
      }
    }
  }
  __syncthreads();

  float alpha = p.alpha, beta = p.beta;
  if (p.alpha_dev) alpha = *p.alpha_dev;
  if (p.beta_dev) beta = *p.beta_dev;
  T *D = static_cast<T *>(p.D);
  const T *Cm = reinterpret_cast<const T *>(p.C);
  const T *bias = reinterpret_cast<const T *>(p.bias);
  const int cols = min(N, p.n);
  for (int e = threadIdx.x; e < R * cols; e += kLinThreads) {
    const int c = e / R, i = e % R, row = r0 + i;
    float v = 0.f;
#pragma unroll
    for (int ww = 0; ww < kLinWarps; ++ww) v += part[i][ww][c];
    v = __fmul_rn(alpha, v);
    if (beta != 0.f) v = fmaf(beta, gs_decode::Elem<T>::to_f(Cm[row + (int64_t)c * p.ldc]), v);
    if (bias) v = __fadd_rn(v, gs_decode::Elem<T>::to_f(bias[row]));
    D[row + (int64_t)c * p.ldd] = gs_decode::Elem<T>::from_f(v);
  }
}

template <typename T, int N, bool kMma>
static cudaError_t launch_linear(Params p, int sms, int per_sm, cudaStream_t stream) {
  int64_t G = std::min<int64_t>(p.m, (int64_t)sms * per_sm);
  if ((p.m + G - 1) / G > kLinMaxRows) G = (p.m + kLinMaxRows - 1) / kLinMaxRows;
  linear_kernel<T, N, kMma><<<(unsigned)G, kLinThreads, 0, stream>>>(p, 0);
  return cudaGetLastError();
}

/* ---- slab: whole rows streamed in memory order ----------------------------
 * The block-partitioned read (read_block_linear) reaches the read ceiling;
 * the 2-D ring (32 rows x 512-byte boxes) and the shipped kernel (8 rows x
 * 64 bytes a load) read every row of the weight at once and do not. Here a
 * CTA streams R whole rows at a time ("a slab": R x k, contiguous when lda
 * == k) into a shared-memory ring, one cp.async.bulk per row and chunk of
 * KC k (R copies a stage, long contiguous runs), and four consumer warps
 * read them with ld.shared into the shipped kernel's TN fragments (R = 8:
 * fragment rows g + 8 are zeros). CTAs are persistent; CTA b takes slabs
 * b, b + G, ... so the grid sweeps the weight front to back. A slab's
 * chunks go to one CTA and its four warps' sums are added in warp order:
 * no split across CTAs, no atomics. k % 32 == 0 here. */
constexpr int kSlabConsumers = 4, kSlabThreads = (kSlabConsumers + 1) * 32;
template <int KC> __host__ __device__ constexpr int slab_pitch() { return KC * 2 + 64; }

template <typename T, int NT, int R, int KC>
__global__ void __launch_bounds__(kSlabThreads, 1) slab_kernel(const Params p, int stages) {
  constexpr int COLS = 8 * NT, P = slab_pitch<KC>(), SB = R * P, H = R / 8;
  static_assert(R == 8 || R == 16, "one m16 fragment: 8 rows (g + 8 zero) or 16");
  extern __shared__ __align__(128) char ring_smem[];
  __shared__ uint64_t full[16], empty[16];
  __shared__ float red[kSlabConsumers][COLS][R];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int G = (int)gridDim.x, b = (int)blockIdx.x;
  const int nslabs = (p.m + R - 1) / R;
  const int chunks = (p.k + KC - 1) / KC;
  const int my_slabs = nslabs > b ? (nslabs - b + G - 1) / G : 0;
  const int units = my_slabs * chunks;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) { mbar_init(&full[s], 1); mbar_init(&empty[s], kSlabConsumers); }
    fence_mbarrier_init();
  }
  __syncthreads();

  if (warp == kSlabConsumers) {
    if (lane == 0)
      for (int u = 0; u < units; ++u) {
        const int s = u % stages, ph = u / stages;
        const int slab = b + (u / chunks) * G, c = u % chunks;
        const int row0 = slab * R, rows = min(R, p.m - row0);
        const int k0 = c * KC, len = min(KC, p.k - k0);
        mbar_wait(&empty[s], (ph & 1) ^ 1);
        mbar_arrive_expect_tx(&full[s], (uint32_t)(rows * len * 2));
        char *st = ring_smem + s * SB;
        for (int r = 0; r < rows; ++r)
          bulk_g2s(st + r * P, p.A + (int64_t)(row0 + r) * p.lda + k0, (uint32_t)(len * 2), &full[s]);
      }
    return;
  }

  float alpha = p.alpha, beta = p.beta;
  if (p.alpha_dev) alpha = *p.alpha_dev;
  if (p.beta_dev) beta = *p.beta_dev;
  T *D = static_cast<T *>(p.D);
  const T *Cm = reinterpret_cast<const T *>(p.C);
  const T *bias = reinterpret_cast<const T *>(p.bias);
  const int cols_valid = min(COLS, p.n);

  float acc[1][NT][4];
  for (int u = 0; u < units; ++u) {
    const int s = u % stages, ph = u / stages;
    const int slab = b + (u / chunks) * G, c = u % chunks;
    const int row0 = slab * R, rows = min(R, p.m - row0);
    const int k0 = c * KC, len = min(KC, p.k - k0);
    if (c == 0)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[0][nt][e] = 0.f;
    mbar_wait(&full[s], ph & 1);
    const char *st = ring_smem + s * SB;
    const int steps = len / 32;
#pragma unroll 4
    for (int j = warp; j < steps; j += kSlabConsumers) {
      gs_decode::StepTN<1, NT> x;
      const int kk = j * 32 + 8 * q;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = 8 * h + g;
        x.a[0][h] = (h < H && r < rows) ? lds128(st + r * P + kk * 2) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int col = nt * 8 + g;
        x.b[nt] = gs_decode::ld_x16(p.B + (int64_t)col * p.ldb + k0 + kk, col < cols_valid);
      }
      gs_decode::mma_tn<T, 1, NT>(acc, x);
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s]);
    if (c == chunks - 1) {
      /* accumulator e of the fragment: row g + 8 (e >> 1), column 2q + (e & 1) */
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = g + 8 * (e >> 1);
          if (r < R) red[warp][nt * 8 + 2 * q + (e & 1)][r] = acc[0][nt][e];
        }
      named_barrier_sync(1, kSlabConsumers * 32);
      for (int e = threadIdx.x; e < rows * cols_valid; e += kSlabConsumers * 32) {
        const int j = e / rows, i = e % rows, row = row0 + i;
        float v = ((red[0][j][i] + red[1][j][i]) + red[2][j][i]) + red[3][j][i];
        v = __fmul_rn(alpha, v);
        if (beta != 0.f) v = fmaf(beta, gs_decode::Elem<T>::to_f(Cm[row + (int64_t)j * p.ldc]), v);
        if (bias) v = __fadd_rn(v, gs_decode::Elem<T>::to_f(bias[row]));
        D[row + (int64_t)j * p.ldd] = gs_decode::Elem<T>::from_f(v);
      }
      named_barrier_sync(1, kSlabConsumers * 32);
    }
  }
}

template <typename T, int NT, int R, int KC>
static cudaError_t launch_slab(Params p, int stages, int sms, cudaStream_t stream) {
  if (p.k % 32 || stages > 16) return cudaErrorNotSupported;
  const size_t smem = (size_t)stages * R * slab_pitch<KC>();
  static size_t smem_set = 0;
  if (smem > smem_set) {
    cudaError_t e = cudaFuncSetAttribute(slab_kernel<T, NT, R, KC>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
    smem_set = smem;
  }
  const int nslabs = (p.m + R - 1) / R;
  const int G = std::min(nslabs, sms);
  slab_kernel<T, NT, R, KC><<<(unsigned)G, kSlabThreads, smem, stream>>>(p, stages);
  return cudaGetLastError();
}
}  // namespace ring

__global__ void fill(uint16_t *p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    float v = ((h & 0xffff) / 65536.0f - 0.5f) * 2.f;
    p[i] = __bfloat16_as_ushort(__float2bfloat16(v));
  }
}
__global__ void empty_kernel() {}
__global__ void spin(long long ns) {
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
__global__ void read_kernel(const uint4 *p, size_t n16, uint4 *sink) {
  uint32_t x = 0;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
    x ^= a.x ^ b.y ^ c.z ^ d.w ^ a.w ^ b.x ^ c.y ^ d.z;
  }
  for (; i < n16; i += stride) { uint4 a = __ldcs(p + i); x ^= a.x ^ a.w; }
  if (x == 0x9e3779b9u) sink[0] = make_uint4(x, x, x, x);
}

/* The read ceiling with the decode kernel's partition: CTA b reads its own
 * contiguous block of `block16` 16-byte words (32 weight rows of a TN
 * weight) front to back, 8 loads in flight per thread: does a block-
 * partitioned read reach the grid-stride ceiling? */
__global__ void read_block_linear(const uint4 *p, size_t block16, size_t n16, uint4 *sink) {
  uint32_t x = 0;
  const size_t base = blockIdx.x * block16, end = min(base + block16, n16);
  size_t i = base + threadIdx.x;
  for (; i + 7 * blockDim.x < end; i += 8 * blockDim.x) {
    uint4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) v[u] = __ldcs(p + i + u * blockDim.x);
#pragma unroll
    for (int u = 0; u < 8; ++u) x ^= v[u].x ^ v[u].w;
  }
  for (; i < end; i += blockDim.x) { uint4 a = __ldcs(p + i); x ^= a.x ^ a.w; }
  if (x == 0x9e3779b9u) sink[0] = make_uint4(x, x, x, x);
}

static double rel_diff(const std::vector<uint16_t> &x, const std::vector<uint16_t> &ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); i++) {
    uint32_t a = (uint32_t)x[i] << 16, b = (uint32_t)ref[i] << 16;
    float fa, fb; memcpy(&fa, &a, 4); memcpy(&fb, &b, 4);
    num += ((double)fa - fb) * ((double)fa - fb); den += (double)fb * fb;
  }
  return sqrt(num / (den > 0 ? den : 1));
}

/* The ring configurations timed: SK (k per stage) and stages in the ring. */
/* kind 0: 1-D bulk ring, 1: 2-D TMA ring (sk, stages); 2: linear FMA, 3: linear mma (stages =
 * CTAs per SM; n <= 8) */
/* kind 4: slab (sk = KC, stages; R = 8 when sk >= 2048 or m is small, else 16: see run_ring) */
struct RingCfg { int tma2d, sk, stages, rows; };
static const RingCfg kCfgs[] = {{1, 256, 4, 0}, {4, 4096, 3, 8}, {4, 2048, 6, 8}, {4, 1024, 12, 8},
                                {4, 2048, 3, 16}, {4, 1024, 6, 16}};
constexpr int kNumCfgs = sizeof kCfgs / sizeof kCfgs[0];

static cudaError_t run_ring(int c, gs_decode::Params p, int sms, cudaStream_t st) {
  const RingCfg &r = kCfgs[c];
  if (r.tma2d == 4) {
#define SLAB(NT, R, KC) if (r.rows == R && r.sk == KC) return ring::launch_slab<__nv_bfloat16, NT, R, KC>(p, r.stages, sms, st)
    if (p.n <= 8) { SLAB(1, 8, 4096); SLAB(1, 8, 2048); SLAB(1, 8, 1024); SLAB(1, 16, 2048); SLAB(1, 16, 1024); }
    else if (p.n <= 16) { SLAB(2, 8, 4096); SLAB(2, 8, 2048); SLAB(2, 8, 1024); SLAB(2, 16, 2048); SLAB(2, 16, 1024); }
#undef SLAB
    return cudaErrorNotSupported;
  }
  if (r.tma2d >= 2) {
#define LIN(N) (r.tma2d == 3 ? ring::launch_linear<__nv_bfloat16, N, true>(p, sms, r.stages, st) \
                             : ring::launch_linear<__nv_bfloat16, N, false>(p, sms, r.stages, st))
    if (p.n == 1) return LIN(1);
    if (p.n == 2) return LIN(2);
    if (p.n <= 4) return LIN(4);
    if (p.n <= 8) return LIN(8);
#undef LIN
    return cudaErrorNotSupported;
  }
  if (r.tma2d) {
#define RING2D(NT, SK) if (r.sk == SK) return ring::launch2d<__nv_bfloat16, NT, SK>(p, r.stages, sms, st)
    if (p.n <= 8) { RING2D(1, 128); RING2D(1, 256); }
    else { RING2D(2, 128); RING2D(2, 256); }
#undef RING2D
    return cudaErrorNotSupported;
  }
  if (p.n <= 8) {
    if (r.sk == 128) return ring::launch<__nv_bfloat16, 1, 128>(p, r.stages, sms, st);
    if (r.sk == 256) return ring::launch<__nv_bfloat16, 1, 256>(p, r.stages, sms, st);
    return ring::launch<__nv_bfloat16, 1, 512>(p, r.stages, sms, st);
  }
  if (r.sk == 128) return ring::launch<__nv_bfloat16, 2, 128>(p, r.stages, sms, st);
  if (r.sk == 256) return ring::launch<__nv_bfloat16, 2, 256>(p, r.stages, sms, st);
  return ring::launch<__nv_bfloat16, 2, 512>(p, r.stages, sms, st);
}

int main(int argc, char **argv) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) { printf("SKIP: no GPU\n"); return 77; }
  struct S { int m, n, k; };
  std::vector<S> shapes;
  for (int i = 1; i + 2 < argc; i += 3) shapes.push_back({atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2])});
  if (shapes.empty()) {
    const int W[][2] = {{1024, 4096}, {1024, 8192}, {2048, 4096}, {4096, 4096}, {5120, 5120}, {6144, 4096}, {4096, 14336}, {14336, 4096}};
    const int N[] = {1, 8, 16};
    for (auto &w : W) for (int n : N) shapes.push_back({w[0], n, w[1]});
  }
  cublasHandle_t h; cublasCreate(&h);
  cudaStream_t st; CK(cudaStreamCreate(&st)); cublasSetStream(h, st);
  int dev; CK(cudaGetDevice(&dev));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  int sms = 0, clk = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  uint4 *sink; CK(cudaMalloc(&sink, 64));
  printf("m,n,k,layout,cublas_us,shipped_us");
  for (int c = 0; c < kNumCfgs; c++) if (kCfgs[c].tma2d == 4) printf(",slab_r%d_kc%d_st%d_us", kCfgs[c].rows, kCfgs[c].sk, kCfgs[c].stages);
  else if (kCfgs[c].tma2d >= 2) printf(",linear_%s_%dpersm_us", kCfgs[c].tma2d == 3 ? "mma" : "fma", kCfgs[c].stages);
  else printf(",%s_sk%d_st%d_us", kCfgs[c].tma2d ? "tma2d" : "bulk1d", kCfgs[c].sk, kCfgs[c].stages);
  printf(",block_linear_read_us,best_ring_us,best_ring_vs_cublas,best_ring_vs_shipped,shipped_vs_cublas,ring_maxdiff_vs_cublas,shipped_diff_vs_cublas,ring_rerun_bitwise,floor_us,ceiling_us,best_ring_pct_ceiling,cublas_pct_ceiling,split\n");
  const int W = 2 + kNumCfgs + 3;   /* cublas, shipped, rings, block read, floor, ceiling */
  for (const S &s : shapes) {
    size_t wel = (size_t)s.m * s.k, wbytes = wel * 2;
    int copies = (int)std::max<size_t>(2, (size_t)(200e6 / wbytes) + 1);
    if (copies > 64) copies = 64;
    std::vector<uint16_t *> A(copies);
    for (int c = 0; c < copies; c++) { CK(cudaMalloc(&A[c], wbytes)); fill<<<1024, 256>>>(A[c], wel, 17 + c); }
    uint16_t *B, *D; size_t bel = (size_t)s.k * s.n, del = (size_t)s.m * s.n;
    CK(cudaMalloc(&B, bel * 2)); CK(cudaMalloc(&D, del * 2 * (W + 1)));
    fill<<<256, 256>>>(B, bel, 99);
    CK(cudaDeviceSynchronize());
    float one = 1.f, zero = 0.f;
    gs_kernel_args a; memset(&a, 0, sizeof a);
    a.m = s.m; a.n = s.n; a.k = s.k; a.trans_a = 1; a.trans_b = 0;
    a.lda = s.k; a.B = B; a.ldb = s.k; a.ldc = s.m; a.ldd = s.m;
    a.alpha = 1.f; a.beta = 0.f; a.stream = st; a.device = dev;
    gs_decode::Params p; memset(&p, 0, sizeof p);
    p.B = B; p.lda = s.k; p.ldb = s.k; p.ldc = s.m; p.ldd = s.m; p.m = s.m; p.n = s.n; p.k = s.k;
    p.alpha = 1.f; p.beta = 0.f;
    auto run = [&](int w, int c, uint16_t *out) -> bool {
      if (w == W - 3) {
        const size_t block16 = (size_t)ring::kRows * s.k * 2 / 16;
        read_block_linear<<<(unsigned)((s.m + ring::kRows - 1) / ring::kRows), 512, 0, st>>>(
            (const uint4 *)A[c], block16, wbytes / 16, sink);
        return true;
      }
      if (w == W - 2) { empty_kernel<<<1, 32, 0, st>>>(); return true; }
      if (w == W - 1) { read_kernel<<<sms * 4, 512, 0, st>>>((const uint4 *)A[c], wbytes / 16, sink); return true; }
      if (w == 0)
        return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, s.m, s.n, s.k, &one, A[c], CUDA_R_16BF, s.k, B, CUDA_R_16BF,
                            s.k, &zero, out, CUDA_R_16BF, s.m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP) ==
               CUBLAS_STATUS_SUCCESS;
      if (w == 1) {
        gs_kernel_args b = a; b.A = A[c]; b.C = out; b.D = out;
        return gs_decode::launch<__nv_bfloat16>(&b, 0) == GS_K_OK;
      }
      gs_decode::Params q = p; q.A = A[c]; q.C = out; q.D = out;
      return run_ring(w - 2, q, sms, st) == cudaSuccess;
    };
    std::vector<uint16_t> ref(del), got(del), again(del);
    bool ok[16];
    for (int w = 0; w < W - 3; w++) {
      ok[w] = run(w, 0, D + w * del);
      if (!ok[w]) fprintf(stderr, "%dx%dx%d: variant %d did not launch: %s\n", s.m, s.n, s.k, w,
                          cudaGetErrorString(cudaGetLastError()));
    }
    ok[W - 3] = ok[W - 2] = ok[W - 1] = true;
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(ref.data(), D, del * 2, cudaMemcpyDeviceToHost));
    double ring_diff = 0, shipped_diff = 0;
    int bitwise = 1;
    for (int w = 1; w < W - 3; w++) if (ok[w]) {
      CK(cudaMemcpy(got.data(), D + w * del, del * 2, cudaMemcpyDeviceToHost));
      const double d = rel_diff(got, ref);
      if (w == 1) shipped_diff = d; else ring_diff = std::max(ring_diff, d);
      if (w >= 2) {
        run(w, 0, D + W * del);
        CK(cudaStreamSynchronize(st));
        CK(cudaMemcpy(again.data(), D + W * del, del * 2, cudaMemcpyDeviceToHost));
        if (memcmp(again.data(), got.data(), del * 2)) bitwise = 0;
      }
    }
    const int reps = 20, samples = 9;
    std::vector<float> t[16];
    int cidx = 0;
    for (int smp = 0; smp < samples + 1; smp++)
      for (int w = 0; w < W; w++) {
        if (!ok[w]) continue;
        spin<<<1, 1, 0, st>>>(300000);
        CK(cudaEventRecord(e0, st));
        for (int r = 0; r < reps; r++) { run(w, cidx, D); cidx = (cidx + 1) % copies; }
        CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        if (smp) t[w].push_back(ms * 1000 / reps);
      }
    double med[16];
    for (int w = 0; w < W; w++) {
      if (!ok[w] || t[w].empty()) { med[w] = NAN; continue; }
      std::sort(t[w].begin(), t[w].end()); med[w] = t[w][t[w].size() / 2];
    }
    double best = INFINITY;
    for (int w = 2; w < W - 3; w++) if (ok[w] && med[w] < best) best = med[w];
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev));
    printf("%d,%d,%d,TN,%.2f,%.2f", s.m, s.n, s.k, med[0], med[1]);
    for (int c = 0; c < kNumCfgs; c++) printf(",%.2f", med[2 + c]);
    printf(",%.2f,%.2f,%.3f,%.3f,%.3f,%.2e,%.2e,%d,%.2f,%.2f,%.1f,%.1f,%d\n", med[W - 3], best, med[0] / best, med[1] / best,
           med[0] / med[1], ring_diff, shipped_diff, bitwise, med[W - 2], med[W - 1], 100 * med[W - 1] / best,
           100 * med[W - 1] / med[0], ring::split_for(s.m, s.k, 256, sms));
    fflush(stdout);
    for (int c = 0; c < copies; c++) cudaFree(A[c]);
    cudaFree(B); cudaFree(D);
  }
  return 0;
}
