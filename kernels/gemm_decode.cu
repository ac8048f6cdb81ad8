/* Decode-shaped GEMMs (kernels/gemm_decode.h): D = alpha * op(A) B + beta * C
 * (+ bias) with few columns n, the weight op(A) read once from HBM.
 *
 * Technique. Each warp streams a band of weight rows over a slice of K
 * straight from global memory into registers, 16 bytes per load that skip
 * L1, and feeds them to mma.sync m16n8k16 (FP32 accumulate) without a trip
 * through shared memory. The order of k inside one mma does not matter to
 * the sum's definition, so each lane's 16-byte load is assigned to the k
 * slots of the fragment it owns, and x (op(B), k x n, small and hot in L2)
 * is loaded with the same assignment:
 *   TN (weight rows contiguous in k): a lane loads 8 consecutive k of its
 *     fragment row; two mma per 32-k step, WM 16-row tiles per warp.
 *   NN (weight columns contiguous in m): a lane loads 8 consecutive rows at
 *     4 consecutive k and pairs them with byte permutes; four mma per 16-k
 *     step cover 64 rows.
 * Columns of the mma beyond n are zeros (n = 1 wastes tensor work, which is
 * free here: the call is bound by the weight's bytes).
 *
 * Split-K, in a fixed order: the four warps of a CTA take four K slices
 * and are summed as (w0 + w2) + (w1 + w3) through shared memory; with few
 * row tiles a cluster of S CTAs takes S further slices, and CTA r sums rows
 * r/S of the tile over ranks 0..S-1 through distributed shared memory. No
 * atomics and no global scratch: the same bits on every run and stream. */
#include "gemm_decode.h"

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <type_traits>

#include "gs_launch.h"

namespace cg = cooperative_groups;

namespace gs_decode {

constexpr int kWarps = 4;          /* per CTA: the in-CTA K split */
constexpr int kMaxCluster = 8;     /* portable cluster size */

template <typename T> struct Elem;
template <> struct Elem<__nv_bfloat16> {
  static __device__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __nv_bfloat16 from_f(float v) { return __float2bfloat16_rn(v); }
  static __device__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};
template <> struct Elem<__half> {
  static __device__ float to_f(__half v) { return __half2float(v); }
  static __device__ __half from_f(float v) { return __float2half_rn(v); }
  static __device__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <> struct Elem<float> {
  static __device__ float to_f(float v) { return v; }
  static __device__ float from_f(float v) { return v; }
};

/* Per layout and column tiles NT (n <= 8 NT): MT m16 fragments per warp,
 * ROWS weight rows per CTA, STEP k per step, U steps in flight per loop. */
template <bool kNN, int NT> struct Cfg;
template <int NT> struct Cfg<false, NT> {
  static constexpr int MT = 2, ROWS = 32, STEP = 32;
  static constexpr int U = NT <= 2 ? 8 : NT == 4 ? 2 : 1;
};
template <int NT> struct Cfg<true, NT> {
  static constexpr int MT = 4, ROWS = 64, STEP = 16;
  static constexpr int U = NT <= 2 ? 4 : NT == 4 ? 2 : 1;
};

/* E: the element as the loads see it (uint16_t for BF16 and FP16, whose
 * bits go to the mma untouched; float for FP32). */
template <typename E>
struct ParamsT {
  const E *A, *B, *C, *bias;       /* A: the weight, B: x (view_of) */
  void *D;
  int64_t lda, ldb, ldc, ldd;
  int m, n, k;                     /* the weight's rows, x's columns, k */
  int split;                       /* cluster size along K */
  /* D and C hold this product transposed: (row, j) at j + row * ld, and
   * bias has a value per column (a call with few rows, view_of) */
  int out_t;
  float alpha, beta;
  const float *alpha_dev, *beta_dev;
};
using Params = ParamsT<uint16_t>;
using ParamsF = ParamsT<float>;

/* Loads without branches (a branch per load keeps the compiler from
 * putting them all in flight): when `on` is false nothing is read and the
 * result is zero. The weight skips L1; x stays in it. */
__device__ __forceinline__ uint4 ld_stream(const void *p, bool on) {
  uint4 v;
  asm volatile(
      "{\n .reg .pred q;\n setp.ne.b32 q, %5, 0;\n"
      " mov.b32 %0, 0; mov.b32 %1, 0; mov.b32 %2, 0; mov.b32 %3, 0;\n"
      " @q ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n}\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "r"((int)on));
  return v;
}
__device__ __forceinline__ uint4 ld_x16(const void *p, bool on) {
  uint4 v;
  asm volatile(
      "{\n .reg .pred q;\n setp.ne.b32 q, %5, 0;\n"
      " mov.b32 %0, 0; mov.b32 %1, 0; mov.b32 %2, 0; mov.b32 %3, 0;\n"
      " @q ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];\n}\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "r"((int)on));
  return v;
}
__device__ __forceinline__ uint2 ld_x8(const uint16_t *p, bool on) {
  uint2 v;
  asm volatile(
      "{\n .reg .pred q;\n setp.ne.b32 q, %3, 0;\n"
      " mov.b32 %0, 0; mov.b32 %1, 0;\n"
      " @q ld.global.nc.v2.u32 {%0,%1}, [%2];\n}\n"
      : "=r"(v.x), "=r"(v.y)
      : "l"(p), "r"((int)on));
  return v;
}
__device__ __forceinline__ uint32_t pack2(uint16_t lo, uint16_t hi) {
  return (uint32_t)lo | ((uint32_t)hi << 16);
}
/* 8 consecutive elements from p, those at index >= lim (counted from p)
 * read as zero. */
__device__ __forceinline__ uint4 ld_guard8(const uint16_t *p, int64_t lim) {
  uint16_t e[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) e[i] = i < lim ? p[i] : (uint16_t)0;
  return make_uint4(pack2(e[0], e[1]), pack2(e[2], e[3]), pack2(e[4], e[5]), pack2(e[6], e[7]));
}
__device__ __forceinline__ uint2 ld_guard4(const uint16_t *p, int64_t lim) {
  uint16_t e[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) e[i] = i < lim ? p[i] : (uint16_t)0;
  return make_uint2(pack2(e[0], e[1]), pack2(e[2], e[3]));
}
__device__ __forceinline__ uint32_t word(const uint4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

/* One step of the TN layout: this lane's loads of A rows and x columns.
 * kGuard: the step reaches past k (the last one), read element by
 * element with zeros beyond. */
template <int MT, int NT>
struct StepTN {
  uint4 a[MT][2];
  uint4 b[NT];
};

template <int MT, int NT, bool kGuard>
__device__ __forceinline__ void load_tn(StepTN<MT, NT> &s, const Params &p, int row0, int kk,
                                        int g, int q) {
  const int64_t kcol = (int64_t)kk + 8 * q;
#pragma unroll
  for (int t = 0; t < MT; ++t)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 16 * t + 8 * h + g;
      const uint16_t *src = p.A + (int64_t)row * p.lda + kcol;
      if (!kGuard) s.a[t][h] = ld_stream(src, row < p.m);
      else if (row < p.m) s.a[t][h] = ld_guard8(src, p.k - kcol);
      else s.a[t][h] = make_uint4(0, 0, 0, 0);
    }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int col = nt * 8 + g;
    const uint16_t *src = p.B + (int64_t)col * p.ldb + kcol;
    if (!kGuard) s.b[nt] = ld_x16(src, col < p.n);
    else if (col < p.n) s.b[nt] = ld_guard8(src, p.k - kcol);
    else s.b[nt] = make_uint4(0, 0, 0, 0);
  }
}

template <typename T, int MT, int NT>
__device__ __forceinline__ void mma_tn(float (&acc)[MT][NT][4], const StepTN<MT, NT> &s) {
#pragma unroll
  for (int half = 0; half < 2; ++half)
#pragma unroll
    for (int t = 0; t < MT; ++t) {
      const uint32_t a[4] = {word(s.a[t][0], 2 * half), word(s.a[t][1], 2 * half),
                             word(s.a[t][0], 2 * half + 1), word(s.a[t][1], 2 * half + 1)};
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
        Elem<T>::mma(acc[t][nt], a, word(s.b[nt], 2 * half), word(s.b[nt], 2 * half + 1));
    }
}

/* One step of the NN layout: 8 rows at 4 consecutive k from A, 4 k of each
 * x column. */
template <int NT>
struct StepNN {
  uint4 a[4];
  uint2 b[NT];
};

/* Without kGuard, the whole band of rows lies inside m and the step
 * inside k. */
template <int NT, bool kGuard>
__device__ __forceinline__ void load_nn(StepNN<NT> &s, const Params &p, int row0, int kk, int g,
                                        int q) {
  const int row = row0 + 8 * g;
  const int rows_left = p.m - row;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int64_t kr = (int64_t)kk + 4 * q + j;
    const uint16_t *src = p.A + kr * p.lda + row;
    if (!kGuard) s.a[j] = ld_stream(src, true);
    else if (kr >= p.k || rows_left <= 0) s.a[j] = make_uint4(0, 0, 0, 0);
    else s.a[j] = ld_guard8(src, rows_left);
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int col = nt * 8 + g;
    const int64_t kr = (int64_t)kk + 4 * q;
    const uint16_t *src = p.B + (int64_t)col * p.ldb + kr;
    if (!kGuard) s.b[nt] = ld_x8(src, col < p.n);
    else if (col < p.n) s.b[nt] = ld_guard4(src, p.k - kr);
    else s.b[nt] = make_uint2(0, 0);
  }
}

template <typename T, int NT>
__device__ __forceinline__ void mma_nn(float (&acc)[4][NT][4], const StepNN<NT> &s) {
  /* Word i of the load at k offset j holds rows 2i, 2i+1 at that k; mma pp
   * takes rows 2pp (fragment row g) and 2pp + 1 (row g + 8). */
#pragma unroll
  for (int pp = 0; pp < 4; ++pp) {
    const uint32_t w0 = word(s.a[0], pp), w1 = word(s.a[1], pp), w2 = word(s.a[2], pp),
                   w3 = word(s.a[3], pp);
    const uint32_t a[4] = {__byte_perm(w0, w1, 0x5410), __byte_perm(w0, w1, 0x7632),
                           __byte_perm(w2, w3, 0x5410), __byte_perm(w2, w3, 0x7632)};
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) Elem<T>::mma(acc[pp][nt], a, s.b[nt].x, s.b[nt].y);
  }
}

/* The row, within the CTA's band, of accumulator e of fragment t. */
template <bool kNN>
__device__ __forceinline__ int row_of(int warp_row0, int t, int e, int g) {
  return kNN ? warp_row0 + 8 * g + 2 * t + (e >> 1) : warp_row0 + 16 * t + g + 8 * (e >> 1);
}

/* The CTA's sum of its four warps' partials, (w0 + w2) + (w1 + w3), left
 * in red[0]. visit(f) calls f(value, cell) for each of this lane's
 * partials and its cell in red (every warp's lane holds the same cells);
 * `writes`: this lane writes its cells (lanes holding the same cells
 * after a warp reduction leave it to one). */
template <int N, typename Visit>
__device__ __forceinline__ void fold_cta(float (&red)[2][N], int warp, Visit &&visit, bool writes) {
  /* a lane that does not write leaves its values alone: its partner's
   * write may race its read */
  auto put = [&](float *buf) {
    if (writes) visit([&](float &v, int c) { buf[c] = v; });
  };
  auto add = [&](const float *buf) {
    if (writes) visit([&](float &v, int c) { v += buf[c]; });
  };
  if (warp >= 2) put(red[warp - 2]);
  __syncthreads();
  if (warp < 2) add(red[warp]);
  __syncthreads();
  if (warp == 1) put(red[0]);
  __syncthreads();
  if (warp == 0) {
    add(red[0]);
    put(red[0]);
  }
}

/* After fold_cta: the rows of the band this CTA finishes (with a cluster,
 * rows rank/split of it, summed over ranks 0..split-1 in rank order
 * through distributed shared memory), then the epilogue into D. red0 holds
 * COLS columns of ROWS + 1 floats. */
template <typename T, int ROWS, int COLS, typename P>
__device__ __forceinline__ void finish(const P &p, float *red0, int rank, int split, int row0) {
  constexpr int LD = ROWS + 1;
  float alpha = p.alpha, beta = p.beta;
  if (p.alpha_dev) alpha = *p.alpha_dev;
  if (p.beta_dev) beta = *p.beta_dev;

  int r_lo = 0, r_hi = ROWS;
  if (split > 1) {
    cg::this_cluster().sync();
    r_lo = rank * ROWS / split;
    r_hi = (rank + 1) * ROWS / split;
  } else {
    __syncthreads();
  }
  const int rows = r_hi - r_lo;
  const int cols = p.n < COLS ? p.n : COLS;
  T *D = static_cast<T *>(p.D);
  const T *Cm = reinterpret_cast<const T *>(p.C);
  const T *bias = reinterpret_cast<const T *>(p.bias);
  /* Neighbouring threads on neighbouring rows of red0, or, for a transposed
   * D summed in this CTA alone, on neighbouring columns (D's neighbours;
   * red0's stride LD is odd, so 32 columns meet no bank conflict, fewer a
   * few). With a cluster the rows win: reads of peers' shared memory along
   * a row coalesce (measured, kernels/gemm_decode.md). */
  const bool along_cols = p.out_t && split == 1;
  for (int e = threadIdx.x; e < rows * cols; e += kWarps * 32) {
    const int j = along_cols ? e % cols : e / rows, i = r_lo + (along_cols ? e / cols : e % rows);
    const int row = row0 + i;
    if (row >= p.m) continue;
    float v;
    if (split > 1) {
      /* all ranks' loads in flight at once, then summed in rank order */
      cg::cluster_group cluster = cg::this_cluster();
      float part[kMaxCluster];
#pragma unroll
      for (int r = 0; r < kMaxCluster; ++r)
        part[r] = r < split ? cluster.map_shared_rank(red0, r)[j * LD + i] : 0.f;
      v = part[0];
#pragma unroll
      for (int r = 1; r < kMaxCluster; ++r)
        if (r < split) v += part[r];
    } else {
      v = red0[j * LD + i];
    }
    /* Explicit roundings, as the other kernels: alpha * acc, + beta * C in
     * one FMA, + bias, rounded once. */
    v = __fmul_rn(alpha, v);
    const int64_t at_c = p.out_t ? j + (int64_t)row * p.ldc : row + (int64_t)j * p.ldc;
    const int64_t at_d = p.out_t ? j + (int64_t)row * p.ldd : row + (int64_t)j * p.ldd;
    if (beta != 0.f) v = fmaf(beta, Elem<T>::to_f(Cm[at_c]), v);
    if (bias) v = __fadd_rn(v, Elem<T>::to_f(bias[p.out_t ? j : row]));
    D[at_d] = Elem<T>::from_f(v);
  }
  /* Peers read this CTA's shared memory until here. */
  if (split > 1) cg::this_cluster().sync();
}

/* One CTA per SM as the bound: it lets the compiler keep every load of a
 * block in flight (with more CTAs as the bound it spends fewer registers
 * and issues the loads a few at a time, between the mma). */
/* kPdl: launched with programmatic dependent launch (the table's
 * launchers; kernels/gemm_decode.md): the kernel may start before the
 * previous kernel of the stream has finished, so it waits for that
 * kernel's memory before touching any (the weight included: the previous
 * kernel may have written it), and lets the next kernel be scheduled at
 * once (a kernel launched so waits for all of this one's memory in turn). */
template <typename T, bool kNN, int NT, bool kPdl>
__global__ void __launch_bounds__(kWarps * 32, 1)
    gemmshim_decode_kernel(const Params p) {
  if constexpr (kPdl) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  }
  using C = Cfg<kNN, NT>;
  constexpr int MT = C::MT, ROWS = C::ROWS, COLS = 8 * NT, LD = ROWS + 1;
  __shared__ float red[2][COLS * LD];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int split = p.split;
  const int rank = (int)(blockIdx.x % (unsigned)split);
  const int tile = (int)(blockIdx.x / (unsigned)split);
  const int row0 = tile * ROWS;

  /* K in blocks of U steps, dealt round-robin to the split * kWarps
   * slices (slice = rank * kWarps + warp): the warps of a CTA, and the CTAs
   * of a cluster, read neighbouring pieces of each weight row at once, which
   * keeps DRAM pages open. The steps after the last whole block, the last
   * one possibly reaching past k, are dealt one by one. */
  const int steps = p.k / C::STEP + (p.k % C::STEP != 0);   /* k + STEP may pass 2^31 */
  const int full = p.k / C::STEP;
  const int slices = split * kWarps, slice = rank * kWarps + warp;
  const int blocks = full / C::U;

  float acc[MT][NT][4];
#pragma unroll
  for (int t = 0; t < MT; ++t)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[t][nt][e] = 0.f;

  if constexpr (!kNN) {
    for (int b = slice; b < blocks; b += slices) {
      StepTN<MT, NT> s[C::U];
#pragma unroll
      for (int u = 0; u < C::U; ++u) load_tn<MT, NT, false>(s[u], p, row0, (b * C::U + u) * C::STEP, g, q);
#pragma unroll
      for (int u = 0; u < C::U; ++u) mma_tn<T, MT, NT>(acc, s[u]);
    }
    for (int st = blocks * C::U + slice; st < steps; st += slices) {
      StepTN<MT, NT> s;
      if (st < full) load_tn<MT, NT, false>(s, p, row0, st * C::STEP, g, q);
      else load_tn<MT, NT, true>(s, p, row0, st * C::STEP, g, q);
      mma_tn<T, MT, NT>(acc, s);
    }
  } else {
    /* a band reaching past m takes the guarded steps throughout */
    const int fast_blocks = row0 <= p.m - ROWS ? blocks : 0;
    for (int b = slice; b < fast_blocks; b += slices) {
      StepNN<NT> s[C::U];
#pragma unroll
      for (int u = 0; u < C::U; ++u) load_nn<NT, false>(s[u], p, row0, (b * C::U + u) * C::STEP, g, q);
#pragma unroll
      for (int u = 0; u < C::U; ++u) mma_nn<T, NT>(acc, s[u]);
    }
    for (int st = fast_blocks * C::U + slice; st < steps; st += slices) {
      StepNN<NT> s;
      if (st < full && fast_blocks) load_nn<NT, false>(s, p, row0, st * C::STEP, g, q);
      else load_nn<NT, true>(s, p, row0, st * C::STEP, g, q);
      mma_nn<T, NT>(acc, s);
    }
  }

  /* Every warp's fragment covers the same (row, column) cells. */
  auto cell = [&](int t, int nt, int e) {
    return (nt * 8 + 2 * q + (e & 1)) * LD + row_of<kNN>(0, t, e, g);
  };
  auto visit = [&](auto &&f) {
#pragma unroll
    for (int t = 0; t < MT; ++t)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) f(acc[t][nt][e], cell(t, nt, e));
  };
  fold_cta(red, warp, visit, true);
  finish<T, ROWS, COLS>(p, red[0], rank, split, row0);
}

/* ---- FP32: strict FP32 arithmetic (FFMA on the CUDA cores) ----
 * The same skeleton (K slices dealt round-robin to the CTA's warps and the
 * cluster's CTAs, the fold, the cluster sum, the epilogue); the weight and
 * x come in 16-byte loads of four floats and meet in FFMA, which leaves
 * each lane a partial over its own k:
 *   TN (weight rows contiguous in k): a lane reads 4 consecutive k of each
 *     of the band's ROWS rows, a warp step covers 128 k; the lanes'
 *     partials are then summed across the warp (warp_sum_halving).
 *   NN (weight columns contiguous in m): a lane owns 4 consecutive rows
 *     (the band: 128), reads them at 4 consecutive k a step and takes x's
 *     4 values of each column in one broadcast load; no sum across lanes.
 * NC columns of x per call (n <= NC), fixed by the template. */
template <bool kNN, int NC> struct CfgF;
template <int NC> struct CfgF<false, NC> {
  static constexpr int ROWS = NC <= 2 ? 16 : 8, STEP = 128, U = 2;
};
template <int NC> struct CfgF<true, NC> {
  static constexpr int ROWS = 128, STEP = 4, U = NC <= 2 ? 8 : NC == 4 ? 4 : 2;
};

__device__ __forceinline__ float4 as_f4(uint4 v) {
  return make_float4(__uint_as_float(v.x), __uint_as_float(v.y), __uint_as_float(v.z),
                     __uint_as_float(v.w));
}
/* 4 consecutive floats from p, those at index >= lim read as zero. */
__device__ __forceinline__ float4 ldf_guard4(const float *p, int64_t lim) {
  float e[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) e[i] = i < lim ? p[i] : 0.f;
  return make_float4(e[0], e[1], e[2], e[3]);
}
__device__ __forceinline__ float comp(const float4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

/* Sums each of a lane's V partials over the warp's 32 lanes in a fixed
 * order, V a power of two. Each level hands half of the values still held
 * to the partner lane and keeps the other half's sums (V/2 + V/4 + ...
 * shuffles instead of 5V); once one value is left, the partners add it
 * whole (a + b and b + a: the same bits). After it, the lane holds
 * owned(V) sums in v[0..): those of values lane * V / 32 + j (V >= 32), or
 * value lane / (32 / V) (V < 32). */
template <int V>
__device__ __forceinline__ void warp_sum_halving(float (&v)[V], int lane) {
  int cnt = V;
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) {
    if (cnt > 1) {
      const bool upper = (lane & d) != 0;
      const int h = cnt / 2;
#pragma unroll
      for (int i = 0; i < V / 2; ++i)
        if (i < h) {
          const float send = upper ? v[i] : v[i + h];
          const float keep = upper ? v[i + h] : v[i];
          v[i] = keep + __shfl_xor_sync(0xffffffffu, send, d);
        }
      cnt = h;
    } else {
      v[0] += __shfl_xor_sync(0xffffffffu, v[0], d);
    }
  }
}

template <bool kNN, int NC, bool kPdl>
__global__ void __launch_bounds__(kWarps * 32, 1)
    gemmshim_decode_f32_kernel(const ParamsF p) {
  if constexpr (kPdl) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  }
  using C = CfgF<kNN, NC>;
  constexpr int ROWS = C::ROWS, LD = ROWS + 1, U = C::U, STEP = C::STEP;
  /* TN: a lane's partials, row-major by (row, column); NN: 4 rows by NC */
  constexpr int R = kNN ? 4 : ROWS, V = R * NC;
  __shared__ float red[2][NC * LD];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int split = p.split;
  const int rank = (int)(blockIdx.x % (unsigned)split);
  const int row0 = (int)(blockIdx.x / (unsigned)split) * ROWS;
  const int steps = p.k / STEP + (p.k % STEP != 0);   /* k + STEP may pass 2^31 */
  const int full = p.k / STEP;
  const int slices = split * kWarps, slice = rank * kWarps + warp;
  const int blocks = full / U;

  float acc[V];
#pragma unroll
  for (int i = 0; i < V; ++i) acc[i] = 0.f;

  /* x's NC columns at k0 .. k0 + 3 (guard: zeros past k) */
  auto load_x = [&](float4 (&x)[NC], int64_t k0, bool guard) {
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      const float *src = p.B + (int64_t)c * p.ldb + k0;
      if (!guard) x[c] = as_f4(ld_x16(src, c < p.n));
      else x[c] = c < p.n ? ldf_guard4(src, p.k - k0) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
  };

  if constexpr (!kNN) {
    /* one step: the band's rows at k0 + 4 lane .. + 3, then x's columns */
    auto load_w = [&](float4 (&w)[ROWS], int64_t kc, bool guard) {
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const int row = row0 + r;
        const float *src = p.A + (int64_t)row * p.lda + kc;
        if (!guard) w[r] = as_f4(ld_stream(src, row < p.m));
        else w[r] = row < p.m ? ldf_guard4(src, p.k - kc) : make_float4(0.f, 0.f, 0.f, 0.f);
      }
    };
    auto fma_step = [&](const float4 (&w)[ROWS], int64_t kc, bool guard) {
      float4 x[NC];
      load_x(x, kc, guard);
#pragma unroll
      for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int c = 0; c < NC; ++c)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[r * NC + c] = fmaf(comp(w[r], j), comp(x[c], j), acc[r * NC + c]);
    };
    for (int b = slice; b < blocks; b += slices) {
      float4 w[U][ROWS];
#pragma unroll
      for (int u = 0; u < U; ++u) load_w(w[u], (int64_t)(b * U + u) * STEP + 4 * lane, false);
#pragma unroll
      for (int u = 0; u < U; ++u) fma_step(w[u], (int64_t)(b * U + u) * STEP + 4 * lane, false);
    }
    for (int st = blocks * U + slice; st < steps; st += slices) {
      float4 w[ROWS];
      const bool guard = st >= full;
      load_w(w, (int64_t)st * STEP + 4 * lane, guard);
      fma_step(w, (int64_t)st * STEP + 4 * lane, guard);
    }
    warp_sum_halving(acc, lane);
  } else {
    const int row = row0 + 4 * lane;
    const int rows_left = p.m - row;
    /* one step: this lane's 4 rows at k0 .. k0 + 3, then x's 4 values of
     * each column there (the same address in every lane: one broadcast) */
    auto load_w = [&](float4 (&w)[4], int64_t k0, bool guard) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int64_t kr = k0 + j;
        const float *src = p.A + kr * p.lda + row;
        if (!guard) w[j] = as_f4(ld_stream(src, true));
        else if (kr >= p.k || rows_left <= 0) w[j] = make_float4(0.f, 0.f, 0.f, 0.f);
        else w[j] = ldf_guard4(src, rows_left);
      }
    };
    auto fma_step = [&](float (&sum)[V], const float4 (&w)[4], int64_t k0, bool guard) {
      float4 x[NC];
      load_x(x, k0, guard);
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
          for (int c = 0; c < NC; ++c) sum[r * NC + c] = fmaf(comp(w[j], r), comp(x[c], j), sum[r * NC + c]);
    };
    /* A lane's sums run over all of its K slice: each block (or lone step)
     * is summed apart, then added in, which keeps the chains of roundings
     * as short as TN's. */
    auto add_in = [&](const float (&sum)[V]) {
#pragma unroll
      for (int i = 0; i < V; ++i) acc[i] += sum[i];
    };
    /* a band reaching past m takes the guarded steps throughout */
    const int fast_blocks = row0 <= p.m - ROWS ? blocks : 0;
    for (int b = slice; b < fast_blocks; b += slices) {
      float4 w[U][4];
#pragma unroll
      for (int u = 0; u < U; ++u) load_w(w[u], (int64_t)(b * U + u) * STEP, false);
      float sum[V] = {};
#pragma unroll
      for (int u = 0; u < U; ++u) fma_step(sum, w[u], (int64_t)(b * U + u) * STEP, false);
      add_in(sum);
    }
    for (int st = fast_blocks * U + slice; st < steps; st += slices) {
      float4 w[4];
      const bool guard = !(st < full && fast_blocks);
      load_w(w, (int64_t)st * STEP, guard);
      float sum[V] = {};
      fma_step(sum, w, (int64_t)st * STEP, guard);
      add_in(sum);
    }
  }

  /* Each lane's cells: TN after the warp sum (V / 32 values, or one value
   * that 32 / V lanes hold alike, written by the first of them); NN its own
   * 4 rows. */
  constexpr int OWN = kNN ? V : (V >= 32 ? V / 32 : 1), SHARED = V >= 32 ? 1 : 32 / V;
  const bool writes = kNN || lane % SHARED == 0;
  auto visit = [&](auto &&f) {
#pragma unroll
    for (int j = 0; j < OWN; ++j) {
      const int idx = kNN ? j : lane / SHARED * OWN + j;
      const int r = idx / NC, c = idx % NC;
      f(acc[j], c * LD + (kNN ? 4 * lane + r : r));
    }
  };
  fold_cta(red, warp, visit, writes);
  finish<float, ROWS, NC>(p, red[0], rank, split, row0);
}

constexpr int kMaxDevices = 64;

/* The column tile a call takes: 16-bit, NT tiles of 8 columns (n up to 8,
 * 16, 32, 64); FP32, NC columns (n up to 1, 2, 4, 8). Both: 1, 2, 4, 8. */
template <bool kF32>
static int tile_of(int64_t n) {
  if constexpr (kF32) return n <= 1 ? 1 : n <= 2 ? 2 : n <= 4 ? 4 : 8;
  else return n <= 8 ? 1 : n <= 16 ? 2 : n <= 32 ? 4 : 8;
}

template <bool kF32, bool kNN, int NT>
using CfgOf = typename std::conditional<kF32, CfgF<kNN, NT>, Cfg<kNN, NT>>::type;

/* The kernel the table's launchers launch for a configuration (the bf16
 * one stands for fp16: the same code but for the mma type). */
template <bool kF32, bool kNN, int NT>
static auto pdl_kernel() {
  if constexpr (kF32) return gemmshim_decode_f32_kernel<kNN, NT, true>;
  else return gemmshim_decode_kernel<__nv_bfloat16, kNN, NT, true>;
}

/* CTAs of a configuration that are resident at once in clusters of 1, 2,
 * 4 and 8 (clusters must fit in one GPC, so the count falls with the
 * cluster size), read once per device through the occupancy API (not a
 * stream operation: safe while a stream captures). Per family (16-bit,
 * FP32): a call's path (the gs_gemm_decode*_path) needs no more than
 * that. 0: unknown. */
static std::atomic<int> wave_of[kMaxDevices][2][2][4][4];

template <bool kF32, bool kNN, int NT>
static int wave(int dev, int si) {
  constexpr int ti = NT == 1 ? 0 : NT == 2 ? 1 : NT == 4 ? 2 : 3;
  if (dev < 0 || dev >= kMaxDevices) return 0;
  std::atomic<int> &slot = wave_of[dev][kF32][kNN][ti][si];
  int w = slot.load(std::memory_order_acquire);
  if (w) return w;
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  const int s = 1 << si;
  cfg.gridDim = dim3((unsigned)s);
  cfg.blockDim = dim3(kWarps * 32);
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = (unsigned)s;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  /* preloaded: no lazy load here, inside a caller's call */
  if (cudaOccupancyMaxActiveClusters(&clusters, pdl_kernel<kF32, kNN, NT>(), &cfg) != cudaSuccess ||
      clusters <= 0) {
    (void)cudaGetLastError();
    return 0;
  }
  w = clusters * s;
  slot.store(w, std::memory_order_release);
  return w;
}

/* Split K across a cluster while the grid still fits in one wave of
 * resident CTAs at that cluster size and every slice keeps a whole block
 * of U steps. */
template <bool kF32, bool kNN, int NT>
static int split_of(int64_t m, int64_t k, int dev) {
  using C = CfgOf<kF32, kNN, NT>;
  const int64_t tiles = (m + C::ROWS - 1) / C::ROWS;
  const int64_t blocks = k / C::STEP / C::U;
  int s = 1, si = 0;
  while (s < kMaxCluster && blocks >= (int64_t)2 * s * kWarps &&
         tiles * 2 * s <= (int64_t)wave<kF32, kNN, NT>(dev, si + 1)) {
    s *= 2;
    ++si;
  }
  return s;
}

/* How the kernels see a call: a weight W of `rows` rows, read once, times
 * x (k x cols, columns contiguous in k), into D or, transposed, into D's
 * transpose.
 *   Few columns (n <= t_max; TN or NN): W = op(A), x = B, D as it is.
 *   Few rows (m <= t_max; TN or TT: a column-major caller's x^T W): the
 *     transpose, D^T = op(B)^T op(A)^T. W = op(B)^T: B stored k x n (TN:
 *     rows contiguous in k, as TN's A) or n x k (TT: as NN's A); x =
 *     op(A)^T = A, stored k x m in both; D and C written transposed.
 * Where both hold (TN, m and n small), the first. */
struct View {
  int64_t rows, cols;
  bool w_nn;                 /* W's columns contiguous: the NN kernels */
  const void *W, *X;
  int64_t ldw, ldx;
  bool out_t;
};

static bool view_of(int64_t m, int64_t n, int trans_a, int trans_b, const void *A, int64_t lda,
                    const void *B, int64_t ldb, int64_t t_max, View *v) {
  if (trans_b == 0 && (trans_a == 0 || trans_a == 1) && n <= t_max) {
    *v = View{m, n, trans_a == 0, A, B, lda, ldb, false};
    return true;
  }
  if (trans_a == 1 && (trans_b == 0 || trans_b == 1) && m <= t_max) {
    *v = View{n, m, trans_b == 1, B, A, ldb, lda, true};
    return true;
  }
  return false;
}

template <bool kF32>
static bool view_of(const gs_kernel_args *a, View *v) {
  return view_of(a->m, a->n, a->trans_a, a->trans_b, a->A, a->lda, a->B, a->ldb,
                 kF32 ? GS_GEMM_DECODE_F32_MAX_N : GS_GEMM_DECODE_MAX_N, v);
}

template <bool kF32>
static int split_for(const View &v, int d, int64_t k) {
  const bool nn = v.w_nn;
  const int64_t m = v.rows;
  switch (tile_of<kF32>(v.cols)) {
    case 1: return nn ? split_of<kF32, true, 1>(m, k, d) : split_of<kF32, false, 1>(m, k, d);
    case 2: return nn ? split_of<kF32, true, 2>(m, k, d) : split_of<kF32, false, 2>(m, k, d);
    case 4: return nn ? split_of<kF32, true, 4>(m, k, d) : split_of<kF32, false, 4>(m, k, d);
    default: return nn ? split_of<kF32, true, 8>(m, k, d) : split_of<kF32, false, 8>(m, k, d);
  }
}

template <bool kF32>
static int split_for(const gs_kernel_args *a) {
  View v;
  return view_of<kF32>(a, &v) ? split_for<kF32>(v, a->device, a->k) : 1;
}

/* pdl_attr: the launch may overlap the previous kernel (the table's
 * launchers: where the driver has it; dev/decode_pdl also launches the
 * kernels crosswise, a control). T float: the FP32 kernel. */
template <typename T, bool kNN, int NT, bool kPdl, typename P>
static gs_kstatus launch_cfg(const P &p, cudaStream_t stream, bool pdl_attr) {
  constexpr bool f32 = std::is_same<T, float>::value;
  using C = CfgOf<f32, kNN, NT>;
  const int64_t tiles = ((int64_t)p.m + C::ROWS - 1) / C::ROWS;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)(tiles * p.split));
  cfg.blockDim = dim3(kWarps * 32);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n_attr = 0;
  if (p.split > 1) {
    attr[n_attr].id = cudaLaunchAttributeClusterDimension;
    attr[n_attr].val.clusterDim.x = (unsigned)p.split;
    attr[n_attr].val.clusterDim.y = 1;
    attr[n_attr].val.clusterDim.z = 1;
    ++n_attr;
  }
  if (pdl_attr) {
    attr[n_attr].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n_attr].val.programmaticStreamSerializationAllowed = 1;
    ++n_attr;
  }
  if (n_attr) {
    cfg.attrs = attr;
    cfg.numAttrs = n_attr;
  }
  gs_launch_begin();
  cudaError_t e;
  if constexpr (f32) e = cudaLaunchKernelEx(&cfg, gemmshim_decode_f32_kernel<kNN, NT, kPdl>, p);
  else e = cudaLaunchKernelEx(&cfg, gemmshim_decode_kernel<T, kNN, NT, kPdl>, p);
  return pdl_attr ? gs_launch_result_pdl(e) : gs_launch_result(e, 0);
}

template <typename T, bool kNN, bool kPdl, typename P>
static gs_kstatus launch_layout(const P &p, cudaStream_t stream, bool pdl_attr) {
  switch (tile_of<std::is_same<T, float>::value>(p.n)) {
    case 1: return launch_cfg<T, kNN, 1, kPdl>(p, stream, pdl_attr);
    case 2: return launch_cfg<T, kNN, 2, kPdl>(p, stream, pdl_attr);
    case 4: return launch_cfg<T, kNN, 4, kPdl>(p, stream, pdl_attr);
    default: return launch_cfg<T, kNN, 8, kPdl>(p, stream, pdl_attr);
  }
}

static int aligned(const void *p, unsigned bytes) { return ((uintptr_t)p % bytes) == 0; }

/* The class of both families: es, the element's bytes (2 or 4); t_max,
 * the most tokens (view_of); leading dimensions in multiples of 16 bytes. */
static int supports(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b, const void *A,
                    int64_t lda, const void *B, int64_t ldb, const void *C, int64_t ldc,
                    int check_c, int es, int64_t t_max) {
  const int64_t lim = (int64_t)1 << 31;
  const int64_t per16 = 16 / es;
  View v;
  if (m <= 0 || k <= 0 || n <= 0 || m >= lim || k >= lim || n >= lim) return 0;
  if (!view_of(m, n, trans_a, trans_b, A, lda, B, ldb, t_max, &v)) return 0;
  if (!A || !B || !aligned(A, 16) || !aligned(B, 16)) return 0;
  if (lda % per16 || ldb % per16) return 0;
  if (lda < (trans_a ? k : m) || ldb < (trans_b ? n : k)) return 0;
  if (check_c && (!C || !aligned(C, (unsigned)es) || ldc < m)) return 0;
  return 1;
}

/* With split < 1, the launcher's own choice. T: __nv_bfloat16, __half, or
 * float (the FP32 kernel). */
template <typename T, bool kPdl = false>
static gs_kstatus launch(const gs_kernel_args *a, int split, bool pdl_attr = kPdl) {
  constexpr bool f32 = std::is_same<T, float>::value;
  constexpr unsigned es = sizeof(T);
  using E = typename std::conditional<f32, float, uint16_t>::type;
  if (!a) return GS_K_UNSUPPORTED;
  const int check_c = a->scalars_on_device ? 1 : (a->beta != 0.f);
  if (!supports(a->m, a->n, a->k, a->trans_a, a->trans_b, a->A, a->lda, a->B, a->ldb, a->C,
                a->ldc, check_c, (int)es, f32 ? GS_GEMM_DECODE_F32_MAX_N : GS_GEMM_DECODE_MAX_N))
    return GS_K_UNSUPPORTED;
  if (!a->D || !aligned(a->D, es) || a->ldd < a->m) return GS_K_UNSUPPORTED;
  if (a->bias && !aligned(a->bias, es)) return GS_K_UNSUPPORTED;
  if (a->scalars_on_device && (!a->alpha_dev || !a->beta_dev)) return GS_K_UNSUPPORTED;
  if (check_c && a->C == a->D && a->ldc != a->ldd) return GS_K_UNSUPPORTED;
  View v;
  (void)view_of<f32>(a, &v);   /* supports() found one */
  if (split < 1) split = split_for<f32>(v, a->device, a->k);
  /* finish sums at most kMaxCluster ranks (a harness's own split) */
  if (split > kMaxCluster || (split & (split - 1))) return GS_K_UNSUPPORTED;
  ParamsT<E> p;
  p.A = static_cast<const E *>(v.W);
  p.B = static_cast<const E *>(v.X);
  p.C = static_cast<const E *>(a->C);
  p.bias = static_cast<const E *>(a->bias);
  p.D = a->D;
  p.lda = v.ldw; p.ldb = v.ldx; p.ldc = a->ldc; p.ldd = a->ldd;
  p.m = (int)v.rows; p.n = (int)v.cols; p.k = (int)a->k;
  p.split = split;
  p.out_t = v.out_t;
  p.alpha = a->alpha; p.beta = a->beta;
  p.alpha_dev = a->scalars_on_device ? a->alpha_dev : nullptr;
  p.beta_dev = a->scalars_on_device ? a->beta_dev : nullptr;
  return v.w_nn ? launch_layout<T, true, kPdl>(p, a->stream, pdl_attr)
                : launch_layout<T, false, kPdl>(p, a->stream, pdl_attr);
}

template <typename F>
static int load_kernel(F *kernel) {
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, kernel) == cudaSuccess) return 1;
  (void)cudaGetLastError();
  return 0;
}

template <typename T, bool kNN>
static int load_layout() {
  if constexpr (std::is_same<T, float>::value)
    return load_kernel(gemmshim_decode_f32_kernel<kNN, 1, true>) &&
           load_kernel(gemmshim_decode_f32_kernel<kNN, 2, true>) &&
           load_kernel(gemmshim_decode_f32_kernel<kNN, 4, true>) &&
           load_kernel(gemmshim_decode_f32_kernel<kNN, 8, true>);
  else
    return load_kernel(gemmshim_decode_kernel<T, kNN, 1, true>) &&
           load_kernel(gemmshim_decode_kernel<T, kNN, 2, true>) &&
           load_kernel(gemmshim_decode_kernel<T, kNN, 4, true>) &&
           load_kernel(gemmshim_decode_kernel<T, kNN, 8, true>);
}

}  // namespace gs_decode

using namespace gs_decode;

extern "C" int gs_gemm_decode_supports(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
                                       const void *A, int64_t lda, const void *B, int64_t ldb,
                                       const void *C, int64_t ldc, int check_c) {
  return supports(m, n, k, trans_a, trans_b, A, lda, B, ldb, C, ldc, check_c, 2,
                  GS_GEMM_DECODE_MAX_N);
}

extern "C" int gs_gemm_decode_f32_supports(int64_t m, int64_t n, int64_t k, int trans_a,
                                           int trans_b, const void *A, int64_t lda, const void *B,
                                           int64_t ldb, const void *C, int64_t ldc, int check_c) {
  return supports(m, n, k, trans_a, trans_b, A, lda, B, ldb, C, ldc, check_c, 4,
                  GS_GEMM_DECODE_F32_MAX_N);
}

/* Programmatic dependent launch, stream capture included, needs a CUDA
 * 12.3 driver; with an older one (or GEMMSHIM_PDL=0: a->no_pdl) the same
 * kernels launch plainly, their wait then a no-op. Read once, by the
 * preload or by whoever asks first (a query of the driver's version,
 * which waits on nothing): -1 until then. */
static std::atomic<int> pdl_in_driver{-1};

static bool driver_has_pdl() {
  int known = pdl_in_driver.load(std::memory_order_acquire);
  if (known < 0) {
    int v = 0;
    known = cudaDriverGetVersion(&v) == cudaSuccess && v >= 12030;
    pdl_in_driver.store(known, std::memory_order_release);
  }
  return known;
}

static bool pdl_for(const gs_kernel_args *a) { return !a->no_pdl && driver_has_pdl(); }

extern "C" int gs_gemm_decode_launches_pdl(void) { return driver_has_pdl(); }

extern "C" gs_kstatus gs_gemm_decode_bf16_launch(const gs_kernel_args *a) {
  return launch<__nv_bfloat16, true>(a, 0, a && pdl_for(a));
}

extern "C" gs_kstatus gs_gemm_decode_f16_launch(const gs_kernel_args *a) {
  return launch<__half, true>(a, 0, a && pdl_for(a));
}

extern "C" gs_kstatus gs_gemm_decode_f32_launch(const gs_kernel_args *a) {
  return launch<float, true>(a, 0, a && pdl_for(a));
}

template <bool kF32>
static int path_of(const gs_kernel_args *a) {
  View v;
  if (!view_of<kF32>(a, &v)) return 0;   /* not a call of the class: never launched */
  const int nt = tile_of<kF32>(v.cols);
  const int col_path = nt == 1 ? 0 : nt == 2 ? 1 : nt == 4 ? 2 : 3;
  return (v.out_t * 4 + col_path) * 2 + (split_for<kF32>(v, a->device, a->k) > 1);
}

extern "C" int gs_gemm_decode_path(const gs_kernel_args *a) { return path_of<false>(a); }

extern "C" int gs_gemm_decode_f32_path(const gs_kernel_args *a) { return path_of<true>(a); }

extern "C" int gs_gemm_decode_preload(void) {
  (void)driver_has_pdl();
  const int ok = load_layout<__nv_bfloat16, false>() && load_layout<__nv_bfloat16, true>() &&
                 load_layout<__half, false>() && load_layout<__half, true>();
  return ok ? 0 : -1;
}

extern "C" int gs_gemm_decode_f32_preload(void) {
  (void)driver_has_pdl();
  return load_layout<float, false>() && load_layout<float, true>() ? 0 : -1;
}
