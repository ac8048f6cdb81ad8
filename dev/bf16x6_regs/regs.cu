/* bf16x6_regs: does the BF16x6 "sepc" consumer fit its registers? A
 * compile-only experiment (kernels/gemm_f32_bf16x9.md, "The kernel: plan
 * and budgets"): the consumer loop of the planned kernel (A from a raw
 * FP32 tile in shared memory, split in registers into hi, mid, lo BF16
 * fragments; per k16 substep one hi*hi wgmma into a chunk accumulator and
 * five lower-class wgmmas into a low accumulator, A from registers; every
 * 32 of K the chunk added to an FP32 main sum by TwoSum, the error into
 * low) with two consumer warpgroups of m64n128 and one warpgroup standing
 * for the split group, at setmaxnreg 232 / 40 (the 168 x 384 registers a
 * 384-thread block starts with; 240 / 32 would need 65536 and hang). No TMA,
 * no barriers between roles, B descriptors fixed: what ptxas allocates is
 * the question (-Xptxas -v: registers, spill stores and loads; C7510-C7519
 * would say wgmma got serialized). Not a kernel to run.
 *
 * Switches: -DINFLIGHT=0 waits for a substep's wgmmas before splitting the
 * next (one set of A parts live), 1 (default) leaves one group in flight;
 * -DA_PARTS_IN_SMEM=1 loads the A parts ready-split from shared memory
 * (the split group would write them) instead of splitting in registers;
 * -DGS_CHUNK_STEPS=2 restarts the chunk every 64 of K instead of 32.
 *
 * Build: make dev/bf16x6_regs/regs.o in a build folder (make check builds
 * it and prints ptxas's report). */
#include <cuda_bf16.h>
#include <stdint.h>

#include "sm90_ptx.cuh"

using namespace gs_sm90;

#ifndef INFLIGHT
#define INFLIGHT 1
#endif
#ifndef GS_CHUNK_STEPS
#define GS_CHUNK_STEPS 1 /* a chunk of 32 of K (the design's) */
#endif
#ifndef A_PARTS_IN_SMEM
#define A_PARTS_IN_SMEM 0
#endif

static_assert(40 * 128 + 232 * 256 <= 168 * 384, "the setmaxnreg budgets fit the block's registers");

namespace {

constexpr int KSTEP = 32;         /* FP32 of K per step: two k16 substeps */
constexpr int CHUNK_STEPS = GS_CHUNK_STEPS; /* steps per hi*hi chunk */
constexpr int ACC = 64;           /* m64n128 FP32 accumulator per thread */


/* hi, mid, lo of two FP32 values, packed in pairs (the tame path: finite
 * values whose hi rounding cannot overflow). */
__device__ __forceinline__ void split2(float x0, float x1, uint32_t &hi, uint32_t &mid,
                                       uint32_t &lo) {
  hi = pack_bf16x2(x0, x1);
  const float h0 = __uint_as_float(hi << 16), h1 = __uint_as_float(hi & 0xffff0000u);
  const float r0 = x0 - h0, r1 = x1 - h1;
  mid = pack_bf16x2(r0, r1);
  const float m0 = __uint_as_float(mid << 16), m1 = __uint_as_float(mid & 0xffff0000u);
  lo = pack_bf16x2(r0 - m0, r1 - m1);
}

__device__ __forceinline__ float two_sum(float a, float b, float &e) {
  const float s = a + b, bb = s - a;
  e = (a - (s - bb)) + (b - bb);
  return s;
}

}  // namespace

__global__ void __launch_bounds__(384, 1)
    bf16x6_consumer_regs(const float *__restrict__ g, float *__restrict__ out, int ksteps) {
  __shared__ __align__(1024) float a_raw[128 * KSTEP];
  __shared__ __align__(1024) __nv_bfloat16 b_parts[3][128 * 64];
#if A_PARTS_IN_SMEM
  __shared__ __align__(16) uint32_t a_parts[2 * 2 * 3 * 256 * 4];
#endif
  for (int i = threadIdx.x; i < 128 * KSTEP; i += blockDim.x) a_raw[i] = g[i];
  __syncthreads();
  const int wg = warpgroup_index();
  if (wg == 0) {
    setmaxnreg_dec<40>();
    return;
  }
  setmaxnreg_inc<232>();
  const int t = threadIdx.x - 128 * wg, warp = t / 32, lane = t % 32;
  const int row0 = 64 * (wg - 1) + 16 * warp + lane / 4, tq = lane % 4;
  const uint64_t d_hi = smem_desc_sw128_kmajor(b_parts[0]);
  const uint64_t d_mid = smem_desc_sw128_kmajor(b_parts[1]);
  const uint64_t d_lo = smem_desc_sw128_kmajor(b_parts[2]);
  float chk[ACC], low[ACC], main_sum[ACC];
#pragma unroll
  for (int i = 0; i < ACC; ++i) low[i] = 0.f, main_sum[i] = 0.f, chk[i] = 0.f;
#pragma unroll 1
  for (int ks = 0; ks < ksteps; ++ks) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      wgmma_wait<INFLIGHT>();
      uint32_t hi[4], mid[4], lo[4];
#if A_PARTS_IN_SMEM
      /* the substep's A parts, split by the split group (16 bytes per part
       * and thread, fragment order) */
      const uint4 *pa =
          reinterpret_cast<const uint4 *>(a_parts) + ((ks & 1) * 2 + j) * 3 * 256 + t;
      const uint4 vh = pa[0], vm = pa[256], vl = pa[512];
      hi[0] = vh.x, hi[1] = vh.y, hi[2] = vh.z, hi[3] = vh.w;
      mid[0] = vm.x, mid[1] = vm.y, mid[2] = vm.z, mid[3] = vm.w;
      lo[0] = vl.x, lo[1] = vl.y, lo[2] = vl.z, lo[3] = vl.w;
#else
      /* the thread's 8 A values of the substep: rows row0 and row0 + 8,
       * four k each (a K permutation makes them one 16-byte run per row) */
      float x[8];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const float4 v = *reinterpret_cast<const float4 *>(
            a_raw + (row0 + 8 * i) * KSTEP + ((8 * tq + 4 * j) ^ (ks & 7)));
        x[4 * i] = v.x, x[4 * i + 1] = v.y, x[4 * i + 2] = v.z, x[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int r = 0; r < 4; ++r) split2(x[2 * r], x[2 * r + 1], hi[r], mid[r], lo[r]);
#endif
      wgmma_fence();
      const uint32_t off = 32 * j + 64 * (ks & 1);
      wgmma_m64n128k16_bf16_rs(chk, hi, smem_desc_advance(d_hi, off), (ks % CHUNK_STEPS == 0 && j == 0) ? 0 : 1);
      wgmma_m64n128k16_bf16_rs(low, hi, smem_desc_advance(d_mid, off), 1);
      wgmma_m64n128k16_bf16_rs(low, mid, smem_desc_advance(d_hi, off), 1);
      wgmma_m64n128k16_bf16_rs(low, hi, smem_desc_advance(d_lo, off), 1);
      wgmma_m64n128k16_bf16_rs(low, lo, smem_desc_advance(d_hi, off), 1);
      wgmma_m64n128k16_bf16_rs(low, mid, smem_desc_advance(d_mid, off), 1);
      wgmma_commit();
    }
    if (ks % CHUNK_STEPS == CHUNK_STEPS - 1) {
      wgmma_wait<0>();
      wgmma_reg_fence(chk);
      wgmma_reg_fence(low);
#pragma unroll
      for (int i = 0; i < ACC; ++i) {
        float e;
        main_sum[i] = two_sum(main_sum[i], chk[i], e);
        low[i] += e;
      }
    }
  }
  wgmma_wait<0>();
  wgmma_reg_fence(low);
#pragma unroll
  for (int i = 0; i < ACC; ++i) out[(size_t)(row0 * 128 + 2 * tq) * ACC + i] = main_sum[i] + low[i];
}
