/* gemm_f32_bf16x6_device.cuh: the device code of the BF16x6 FP32 GEMM
 * (kernels/gemm_f32_bf16x6.cu, design and numbers in
 * kernels/gemm_f32_bf16x9.md), shared with its lab, dev/bf16x6/bf16x6.cu,
 * whose research kernels use the same tile, epilogue and pre-passes.
 *
 * Numerics. Each FP32 value x of a row of op(A) (column of op(B)) is
 * scaled by 2^-s, s the exponent of the run's largest finite |value|
 * (exact while normal), and split exactly into three BF16 parts, hi + mid
 * + lo = x 2^-s (kernels/bf16x3_split.h). Per K-step of 32 the tensor cores
 * accumulate hi*hi into a chunk accumulator and the five products
 * hi*mid, mid*hi, hi*lo, lo*hi, mid*mid into `low`; the chunk is added to
 * the FP32 main sum by TwoSum, its rounding error into `low`. The epilogue
 * writes (main + low) 2^(sa + sb). Where the other operand holds an Inf or
 * NaN, a nonzero value whose scaled hi would be 0 gets BF16's smallest
 * subnormal (scale_sticky): an Inf then never meets a 0 in hi*hi.
 *
 * Technique:
 *   - A pre-pass per operand writes its parts ([3][runs][kp] BF16, kp = k
 *     rounded up to 64, zeros past k, the K permutation of
 *     kernels/bf16x6_index.h), reading the operand K-major (presplit) or
 *     MN-major (presplit_mn, through a shared tile): the layout lives in
 *     the pre-pass, the main kernel is one.
 *   - Main kernel: block tile 128 x 128, 384 threads; warpgroup 0's one
 *     thread issues TMA loads of a pair of K-steps of all six part tiles a
 *     stage (2 stages, 96 KB each); warpgroups 1 and 2 take 64 rows each
 *     and issue their K-step's wgmmas in turns (ping-pong on named
 *     barriers), so that one's TwoSum runs while the tensor cores work the
 *     other's products.
 *   - Epilogue: staged column-major through the drained ring, every load
 *     (scales, C) a thread needs issued before its first store (a load
 *     after a store to D waits for it: the pointers may alias). */
#ifndef GS_GEMM_F32_BF16X6_DEVICE_CUH
#define GS_GEMM_F32_BF16X6_DEVICE_CUH

#include <cuda.h>
#include <cuda_bf16.h>
#include <cudaTypedefs.h>
#include <float.h>
#include <stdint.h>

#include "bf16x3_split.h"
#include "bf16x6_index.h"
#include "sm90_ptx.cuh"

namespace gs_bf16x6 {

using namespace gs_sm90;

constexpr int BM = 128, BN = 128, BK = 32;
constexpr int ACC = 64;                 /* m64n128 FP32 accumulator per thread */
constexpr int SPLIT_REGS = 40, CONSUMER_REGS = 232;
/* setmaxnreg moves registers inside what the block started with: 168 a
 * thread (ptxas's cap for 384 threads), not the whole register file */
static_assert(SPLIT_REGS * 128 + CONSUMER_REGS * 256 <= 168 * 384,
              "the setmaxnreg budgets fit the block's registers");
constexpr int CONSUMER_WARPS = 8;
constexpr int EPI_LD = 64 + 4;          /* floats per staged column */

/* D = alpha (op(A) op(B)) + beta C (+ bias[row]); C read only when beta
 * != 0, alpha and beta from alpha_dev / beta_dev when those are set.
 * scales: the pre-pass's m + n + 2 ints: each row of op(A)'s exponent s
 * (its largest finite |value| in [2^s, 2^(s+1)), clamped to [-126, 126];
 * 0 for none), each column of op(B)'s, then two flags: A holds a
 * non-finite value, B does. NULL only in the lab (its unscaled variant). */
struct Params {
  int m, n, k;
  const float *C;
  float *D;
  int64_t ldc, ldd;
  float alpha, beta;
  const float *alpha_dev, *beta_dev;
  const float *bias;
  const int *scales;
};

__device__ __forceinline__ int scale_of_a(const Params &p, int64_t r) { return p.scales[r]; }
__device__ __forceinline__ int scale_of_b(const Params &p, int64_t c) { return p.scales[p.m + c]; }

/* 2^-s for s in [-126, 126]: a normal power of two, so x 2^-s is exact
 * while the result is normal. */
__device__ __forceinline__ float unscale_of(int s) { return __int_as_float((127 - s) << 23); }

/* x scaled by f = 2^-s. With sticky (the other operand holds an Inf or
 * NaN), a nonzero x whose scaled hi part would be 0 (at most half BF16's
 * smallest subnormal, 2^-134) gets that subnormal, 2^-133, with its sign:
 * an Inf or NaN meets only this operand's hi part, so it then gives what
 * FP64 gives (Inf, not Inf * 0 = NaN). Each such finite product is off by
 * up to 2^-133 of the row's or column's largest value: hence only where an
 * Inf or NaN may meet it. */
__device__ __forceinline__ float scale_sticky(float x, float f) {
  const float y = x * f;
  return (x != 0.f && fabsf(y) <= 0x1p-134f) ? copysignf(0x1p-133f, x) : y;
}
/* Four values scaled; the sticky rule only where it applies (a uniform
 * branch: the flag is the whole matrix's). */
__device__ __forceinline__ float4 scale4(float4 x, float f, bool sticky) {
  if (sticky)
    return make_float4(scale_sticky(x.x, f), scale_sticky(x.y, f), scale_sticky(x.z, f),
                       scale_sticky(x.w, f));
  return make_float4(x.x * f, x.y * f, x.z * f, x.w * f);
}

/* Grouped raster of 8 tile rows. */
__device__ __forceinline__ void tile_origin(const Params &p, int &m0, int &n0) {
  const int tiles_m = p.m / BM, tiles_n = p.n / BN, bid = blockIdx.x;
  const int per_group = 8 * tiles_n, group = bid / per_group, first_m = group * 8;
  const int gsize = min(tiles_m - first_m, 8), in_group = bid - group * per_group;
  m0 = (first_m + in_group % gsize) * BM;
  n0 = (in_group / gsize) * BN;
}

/* The K-step's chunk into the main sum by TwoSum, its rounding error into
 * low. */
__device__ __forceinline__ void fold_chunk(float (&main_sum)[ACC], const float (&chk)[ACC],
                                           float (&low)[ACC]) {
#pragma unroll
  for (int i = 0; i < ACC; ++i) {
    const float a = main_sum[i], b = chk[i], s2 = a + b, bb = s2 - a;
    low[i] += (a - (s2 - bb)) + (b - bb);
    main_sum[i] = s2;
  }
}

/* Epilogue of consumer warpgroup cw (thread t of it): main + low, staged
 * column-major through shared memory at base (the drained ring), the
 * scales multiplied back when there are any, then alpha, beta C and the
 * bias in the other kernels' order (alpha * acc, one FMA with beta * C,
 * then + bias; rounded at each). */
__device__ __forceinline__ void store_tile(float *base, const Params &p, int m0, int n0, int cw,
                                           int t, const float (&main_sum)[ACC],
                                           const float (&low)[ACC]) {
  const int warp = t >> 5, g = (t & 31) >> 2, tq = t & 3;
  named_barrier_sync(1, 256);
  float *epi = base + (size_t)cw * BN * EPI_LD;
#pragma unroll
  for (int v = 0; v < ACC; ++v) {
    const int row = warp * 16 + g + 8 * ((v >> 1) & 1);
    const int col = (v >> 2) * 8 + 2 * tq + (v & 1);
    /* an Inf in main (or in a chunk, which makes main Inf) turns low NaN
     * through the TwoSum; main alone is SGEMM's answer then (whatever the
     * lower products made of an Inf or NaN input: its hi * hi product
     * made main non-finite) */
    epi[col * EPI_LD + row] = fabsf(main_sum[v]) <= FLT_MAX ? main_sum[v] + low[v] : main_sum[v];
  }
  named_barrier_sync(2 + cw, 128);
  constexpr int PASSES = BN / 8;
  const int run = t % 16; /* 16 runs of 4 rows per column */
  const int64_t row_g = (int64_t)m0 + cw * 64 + run * 4;
  const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
  const float beta = p.beta_dev ? *p.beta_dev : p.beta;
  /* every load this thread needs (scales, bias, C) issued before its first
   * store: a load placed after a store to D waits for it (the compiler
   * cannot move it above: the pointers may alias), sixteen latencies in
   * series a tile */
  int sa[4] = {0, 0, 0, 0}, sb[PASSES];
  if (p.scales)
#pragma unroll
    for (int i = 0; i < 4; ++i) sa[i] = scale_of_a(p, row_g + i);
#pragma unroll
  for (int pass = 0; pass < PASSES; ++pass)
    sb[pass] = p.scales ? scale_of_b(p, n0 + pass * 8 + t / 16) : 0;
  float4 bias4 = make_float4(0.f, 0.f, 0.f, 0.f);
  if (p.bias) bias4 = *reinterpret_cast<const float4 *>(p.bias + row_g);
  float4 c4[PASSES];
  if (beta != 0.f) {
#pragma unroll
    for (int pass = 0; pass < PASSES; ++pass)
      c4[pass] = *reinterpret_cast<const float4 *>(p.C + ((int64_t)n0 + pass * 8 + t / 16) * p.ldc +
                                                   row_g);
  }
#pragma unroll
  for (int pass = 0; pass < PASSES; ++pass) {
    const int col = pass * 8 + t / 16;
    float4 a4 = *reinterpret_cast<const float4 *>(epi + col * EPI_LD + run * 4);
    if (p.scales) { /* the scales back: exact unless D over- or underflows */
      a4.x = ldexpf(a4.x, sa[0] + sb[pass]), a4.y = ldexpf(a4.y, sa[1] + sb[pass]);
      a4.z = ldexpf(a4.z, sa[2] + sb[pass]), a4.w = ldexpf(a4.w, sa[3] + sb[pass]);
    }
    a4 = make_float4(alpha * a4.x, alpha * a4.y, alpha * a4.z, alpha * a4.w);
    if (beta != 0.f) {
      a4.x = fmaf(beta, c4[pass].x, a4.x), a4.y = fmaf(beta, c4[pass].y, a4.y);
      a4.z = fmaf(beta, c4[pass].z, a4.z), a4.w = fmaf(beta, c4[pass].w, a4.w);
    }
    if (p.bias) /* only with a bias: x + 0 would turn -0 into +0 */
      a4.x += bias4.x, a4.y += bias4.y, a4.z += bias4.z, a4.w += bias4.w;
    *reinterpret_cast<float4 *>(p.D + ((int64_t)n0 + col) * p.ldd + row_g) = a4;
  }
}

/* ---- the main kernel: both operands pre-split ----
 * Every wgmma takes both operands from shared memory, a consumer
 * warpgroup's A rows 64 cw .. 64 cw + 63 of the part tile (8192 cw bytes
 * on: whole 1024-byte swizzle atoms, so the swizzle's phase is the
 * tile's). One producer thread loads a pair of K-steps of all six parts a
 * stage; the consumers take turns (ping-pong): the same wgmmas in the same
 * order per accumulator. */
constexpr int SP = 2;                            /* stages of a pair of K-steps */
constexpr uint32_t PAIR_BYTES = BN * 64 * 2;     /* one part of two K-steps: 16 KB */
static_assert(BM == BN, "A's part tiles are PAIR_BYTES too");

/* named barriers kTurnBar + cw (1 and 2 + cw are store_tile's) */
constexpr int kTurnBar = 5;
__device__ __forceinline__ void named_barrier_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

struct SmemAB {
  alignas(1024) __nv_bfloat16 a[SP][3][BM * 64]; /* [stage][hi, mid, lo] */
  alignas(1024) __nv_bfloat16 b[SP][3][BN * 64];
  uint64_t full[SP], empty[SP];
};
constexpr size_t kSmemABBytes = sizeof(SmemAB) + 1024;
static_assert(kSmemABBytes <= 227 * 1024, "fits the per-block shared memory");
static_assert(2 * BN * EPI_LD * 4 <= sizeof(__nv_bfloat16) * SP * 3 * (BM + BN) * 64,
              "epilogue fits the ring");

/* K-steps of the parts: k rounded up to the step (the parts are zero past
 * k, to kp). */
__host__ __device__ __forceinline__ int ksteps_of(int k) { return (k + BK - 1) / BK; }

__global__ void __launch_bounds__(384, 1)
    bf16x6_presplit_ab_kernel(const __grid_constant__ CUtensorMap tmPA,
                              const __grid_constant__ CUtensorMap tmPB, const Params p) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t pad = (1024u - (smem_u32(smem_raw) & 1023u)) & 1023u;
  SmemAB &sm = *reinterpret_cast<SmemAB *>(smem_raw + pad);
  int m0, n0;
  tile_origin(p, m0, n0);
  const int KT = ksteps_of(p.k), pairs = (KT + 1) / 2;
  const int tid = (int)tid_x();
  if (tid == 0) {
    for (int u = 0; u < SP; ++u) mbar_init(&sm.full[u], 1), mbar_init(&sm.empty[u], CONSUMER_WARPS);
    fence_mbarrier_init();
    prefetch_tensormap(&tmPA);
    prefetch_tensormap(&tmPB);
  }
  __syncthreads();
  if (warpgroup_index() == 0) {
    /* ---- producer: one thread issues every TMA ---- */
    setmaxnreg_dec<SPLIT_REGS>();
    if (tid != 0) return;
#pragma unroll 1
    for (int t2 = 0; t2 < pairs; ++t2) {
      const int u = t2 % SP;
      mbar_wait(&sm.empty[u], ((t2 / SP) & 1u) ^ 1u, 4);
      mbar_arrive_expect_tx(&sm.full[u], 6 * PAIR_BYTES);
      for (int part = 0; part < 3; ++part) {
        tma_load_2d(sm.a[u][part], &tmPA, &sm.full[u], t2 * 64, part * p.m + m0);
        tma_load_2d(sm.b[u][part], &tmPB, &sm.full[u], t2 * 64, part * p.n + n0);
      }
    }
    return;
  }

  /* ---- consumers ---- */
  setmaxnreg_inc<CONSUMER_REGS>();
  const int cw = (tid >> 7) - 1, t = tid & 127, lane = t & 31;
  float chk[ACC], low[ACC], main_sum[ACC];
#pragma unroll
  for (int i = 0; i < ACC; ++i) chk[i] = 0.f, low[i] = 0.f, main_sum[i] = 0.f;
#pragma unroll 1
  for (int kt = 0; kt < KT; ++kt) {
    const int u = (kt >> 1) % SP, h = kt & 1;
    mbar_wait(&sm.full[u], ((kt >> 1) / SP) & 1u, 2);
    const uint64_t a_hi = smem_desc_sw128_kmajor(sm.a[u][0] + cw * 64 * 64);
    const uint64_t a_mid = smem_desc_sw128_kmajor(sm.a[u][1] + cw * 64 * 64);
    const uint64_t a_lo = smem_desc_sw128_kmajor(sm.a[u][2] + cw * 64 * 64);
    const uint64_t b_hi = smem_desc_sw128_kmajor(sm.b[u][0]);
    const uint64_t b_mid = smem_desc_sw128_kmajor(sm.b[u][1]);
    const uint64_t b_lo = smem_desc_sw128_kmajor(sm.b[u][2]);
    /* this warpgroup's turn (the first is warpgroup 0's) */
    if (kt > 0 || cw > 0) named_barrier_sync(kTurnBar + cw, 256);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const uint32_t off = bf16x6_desc_offset(h, j);
      wgmma_fence();
      wgmma_m64n128k16_bf16(chk, smem_desc_advance(a_hi, off), smem_desc_advance(b_hi, off), j);
      wgmma_m64n128k16_bf16(low, smem_desc_advance(a_hi, off), smem_desc_advance(b_mid, off), 1);
      wgmma_m64n128k16_bf16(low, smem_desc_advance(a_mid, off), smem_desc_advance(b_hi, off), 1);
      wgmma_m64n128k16_bf16(low, smem_desc_advance(a_hi, off), smem_desc_advance(b_lo, off), 1);
      wgmma_m64n128k16_bf16(low, smem_desc_advance(a_lo, off), smem_desc_advance(b_hi, off), 1);
      wgmma_m64n128k16_bf16(low, smem_desc_advance(a_mid, off), smem_desc_advance(b_mid, off), 1);
      wgmma_commit();
    }
    /* the other's turn (its last one is never waited for) */
    if (kt + 1 < KT || cw == 0) named_barrier_arrive(kTurnBar + (cw ^ 1), 256);
    wgmma_wait<0>();
    wgmma_reg_fence(chk);
    wgmma_reg_fence(low);
    if (lane == 0 && (h == 1 || kt == KT - 1)) mbar_arrive(&sm.empty[u]);
    fold_chunk(main_sum, chk, low);
  }
  store_tile(reinterpret_cast<float *>(&sm), p, m0, n0, cw, t, main_sum, low);
}

/* ---- the pre-passes ---- */

/* The exponent of a run whose largest finite |value| has the bits mx. */
__device__ __forceinline__ int exponent_of(uint32_t mx) {
  int e = 0;
  if (mx) frexpf(__uint_as_float(mx), &e), e -= 1;
  return max(-126, min(126, e));
}

/* A run of k values (a row of op(A) or column of op(B), K-major), read by
 * one warp: the exponent of its largest finite |value| clamped to [-126,
 * 126] (0 when none), in every lane; *wild whether it holds an Inf or
 * NaN. */
__device__ __forceinline__ int run_exponent(const float *r, int64_t k, int lane, bool *wild) {
  uint32_t mx = 0, nf = 0;
#pragma unroll 8
  for (int64_t i = lane; i < k; i += 32) {
    const uint32_t b = __float_as_uint(r[i]) & 0x7fffffffu;
    if (b < 0x7f800000u) mx = max(mx, b); /* finite only */
    else nf = 1;
  }
  for (int o = 16; o; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  *wild = __any_sync(0xffffffffu, nf);
  return exponent_of(mx);
}

/* Each run's exponent (run_exponent), one warp a run of x (runs K-major,
 * ld apart); *nonfinite set when a run holds an Inf or NaN. */
__global__ void run_exponents(const float *x, int64_t k, int64_t ld, int runs, int *out,
                              int *nonfinite) {
  const int warp = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (warp >= runs) return;
  bool wild;
  const int e = run_exponent(x + (int64_t)warp * ld, k, lane, &wild);
  if (lane == 0) {
    out[warp] = e;
    if (wild) atomicOr(nonfinite, 1);
  }
}

/* Two values' parts (the exact split) at o, o + part_words and o + 2
 * part_words: hi, mid and lo, the first value in the low half. */
__device__ __forceinline__ void store_parts(uint32_t *o, size_t part_words, float2 v) {
  const gs_bf16x3 a = gs_bf16x3_split(v.x), b = gs_bf16x3_split(v.y);
  o[0] = a.hi | ((uint32_t)b.hi << 16);
  o[part_words] = a.mid | ((uint32_t)b.mid << 16);
  o[2 * part_words] = a.lo | ((uint32_t)b.lo << 16);
}

/* The split of a K-major operand: one warp a run of k values (a column of
 * op(B) or a row of op(A), runs ld apart) into parts ([3 runs][kp] BF16),
 * lane L writing elements 2 L, 2 L + 1 of each 64 (one 32-bit word of each
 * part, the warp 128 contiguous bytes a part). With exps (scaled) it
 * splits x 2^-s, s the run's exponent: found here as run_exponents does
 * and written to exps when flag is given (flag set when the run holds an
 * Inf or NaN), read from exps when not; small values sticky when *other,
 * the other operand's flag, is set. x and ld must allow float2 reads
 * (8-byte aligned, ld even). */
__global__ void presplit(const float *__restrict__ x, int k, int64_t ld, int runs, int kp,
                         uint32_t *__restrict__ parts, int *exps, int *flag, const int *other) {
  const int c = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (c >= runs) return;
  const float *col = x + (int64_t)c * ld;
  float f = 1.f;
  bool sticky = false;
  if (exps) {
    int e;
    if (flag) {
      bool wild;
      e = run_exponent(col, k, lane, &wild);
      if (lane == 0) {
        exps[c] = e;
        if (wild) atomicOr(flag, 1);
      }
    } else {
      e = exps[c];
    }
    f = unscale_of(e);
    sticky = *other != 0;
  }
  const int within = bf16x6_presplit_raw(2 * lane); /* even: a float2 */
  const size_t part_words = (size_t)runs * kp / 2;
  uint32_t *const out = parts + (size_t)c * kp / 2 + lane;
  /* groups of G chunks of 64 values: the group's loads issued before its
   * stores, so that a warp has G loads in flight */
  constexpr int G = 4;
  for (int base = 0; base < kp; base += 64 * G) {
    float2 v[G];
#pragma unroll
    for (int q = 0; q < G; ++q) {
      const int raw = base + 64 * q + within;
      /* an odd k's last value alone: its pair would lie past the run */
      v[q] = raw + 1 < k ? __ldg(reinterpret_cast<const float2 *>(col + raw))
                         : make_float2(raw < k ? __ldg(col + raw) : 0.f, 0.f);
    }
#pragma unroll
    for (int q = 0; q < G; ++q) {
      if (base + 64 * q >= kp) break;
      if (exps) {
        const float4 y = scale4(make_float4(v[q].x, v[q].y, 0.f, 0.f), f, sticky);
        v[q] = make_float2(y.x, y.y);
      }
      store_parts(out + (size_t)(base / 64 + q) * 32, part_words, v[q]);
    }
  }
}

/* An MN-major operand (element (run r, k index kk) at x[kk * ld + r]: op(A)
 * of an N call, op(B) of a T call); its parts are the K-major operand's.
 *
 * The exponents, in two steps: each block takes 32 runs (a warp's lanes)
 * and a slice of k (blockIdx.y), its 8 warps 8 interleaved rows of it,
 * and folds the largest finite |value|'s bits into bits[r] (atomicMax:
 * non-negative bit patterns order as the values do), setting *nonfinite
 * on an Inf or NaN; then exps_of_bits turns bits into exponents in
 * place (bits must start zeroed). */
__global__ void run_bits_mn(const float *__restrict__ x, int k, int64_t ld, int runs, int *bits,
                            int *nonfinite) {
  __shared__ uint32_t part[8][32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int r = blockIdx.x * 32 + lane;
  const int per = (k + gridDim.y - 1) / gridDim.y, k0 = blockIdx.y * per, k1 = min(k, k0 + per);
  uint32_t mx = 0, nf = 0;
  if (r < runs) {
#pragma unroll 4
    for (int kk = k0 + warp; kk < k1; kk += 8) {
      const uint32_t b = __float_as_uint(x[(int64_t)kk * ld + r]) & 0x7fffffffu;
      if (b < 0x7f800000u) mx = max(mx, b);
      else nf = 1;
    }
  }
  part[warp][lane] = mx;
  if (__syncthreads_or(nf) && threadIdx.x == 0) atomicOr(nonfinite, 1);
  if (warp == 0 && r < runs) {
    for (int w = 1; w < 8; ++w) mx = max(mx, part[w][lane]);
    if (mx) atomicMax(&bits[r], (int)mx);
  }
}
__global__ void exps_of_bits(int *bits, int runs) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < runs) bits[r] = exponent_of((uint32_t)bits[r]);
}

/* The split of an MN-major operand: a block 64 runs and every
 * gridDim.y-th chunk of 64 k from blockIdx.y's on, through a shared tile
 * of 64 k x 64 runs at a time (read along the runs: coalesced), each warp
 * then writing 8 runs' parts as presplit does. With exps: x 2^-s, sticky
 * when *other is set. */
__global__ void presplit_mn(const float *__restrict__ x, int k, int64_t ld, int runs, int kp,
                            uint32_t *__restrict__ parts, const int *exps, const int *other) {
  __shared__ float tile[64][65];
  const int r0 = blockIdx.x * 64, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const size_t part_words = (size_t)runs * kp / 2;
  const int within = bf16x6_presplit_raw(2 * lane); /* even */
  const bool sticky = exps && *other != 0;
  for (int base = 64 * blockIdx.y; base < kp; base += 64 * gridDim.y) {
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const int kk = (threadIdx.x >> 6) + 4 * i, r = threadIdx.x & 63;
      const int gk = base + kk, gr = r0 + r;
      tile[kk][r] = gk < k && gr < runs ? x[(int64_t)gk * ld + gr] : 0.f;
    }
    __syncthreads();
    for (int j = 0; j < 8; ++j) {
      const int r = warp * 8 + j, gr = r0 + r;
      if (gr >= runs) break; /* warp-uniform */
      float4 v = make_float4(tile[within][r], tile[within + 1][r], 0.f, 0.f);
      if (exps) v = scale4(v, unscale_of(exps[gr]), sticky);
      store_parts(parts + (size_t)gr * kp / 2 + base / 2 + lane, part_words,
                  make_float2(v.x, v.y));
    }
    __syncthreads();
  }
}

/* ---- host ---- */

/* k rounded up to a pair of K-steps: the parts' row length. */
__host__ __device__ __forceinline__ int parts_kp(int k) { return (k + 63) / 64 * 64; }

/* An operand's pre-split parts ([3 rows][kp] BF16): boxes of 64 values
 * (two K-steps) by 128 rows, 128-byte swizzle. */
inline int encode_parts(PFN_cuTensorMapEncodeTiled_v12000 enc, CUtensorMap *map, const void *ptr,
                        int64_t kp, int64_t rows) {
  const cuuint64_t dims[2] = {(cuuint64_t)kp, (cuuint64_t)rows};
  const cuuint64_t strides[1] = {(cuuint64_t)kp * 2};
  const cuuint32_t box[2] = {64, 128};
  const cuuint32_t estrides[2] = {1, 1};
  return enc(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(ptr), dims, strides,
             box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace gs_bf16x6

#endif
