/* gemm_f32_3xtf32.cu: FP32 GEMM on Hopper tensor cores, 3xTF32 with FP32
 * accumulation of per-K-chunk partials outside the tensor cores (issue 6;
 * Ootomo and Yokota's error-corrected TF32 GEMM). Layout TN, column-major
 * as cuBLAS: D[m,n] = alpha * A^T B + beta * C (+ bias[m]), A stored k x m,
 * B stored k x n (both contiguous along k, which TF32 wgmma requires), FP32
 * in and out.
 *
 * Measured on the H200 (2026-12-03, gemm_f32_3xtf32.NOTES.md): selftest 46
 * of 46, compute-sanitizer memcheck and synccheck clean, ~103 TFLOP/s at
 * 4096^3 and 8192^3 (2.05-2.08x cuBLAS SGEMM), error vs FP64 0.19-0.49x
 * SGEMM's on randn data at K = 256 ... 16384.
 *
 * Numerics. Each operand value x = big + small (+ a residual below
 * 2^-22 |x|), big = TF32(x), small = TF32(x - big): kernels/tf32_split.h's
 * split, which its CPU tests check, here in a branch-free form proved
 * bit-identical to it over all 2^32 inputs (split_words below), and a
 * 5-instruction form for "tame" values (|x| below 0x7f7ff000: finite, no
 * rounding to Inf; split_fast, equal to split_words on all of them). A*B
 * is taken as big*big + (cross_a*small_b + small_a*cross_b), where cross =
 * big for finite x and 0 for Inf/NaN (so a non-finite input reaches D
 * through big*big only and gives SGEMM's Inf/NaN pattern). The tensor
 * cores accumulate the products of one K-step (a chunk of 32) into a chunk
 * accumulator (wgmma scale-d = 0 starts each chunk), the 8 correction
 * products first, while the accumulator is small, and the 4 big*big last:
 * the tensor cores' truncating accumulation then costs 4 full-size
 * roundings a chunk instead of ~11. The chunk is added to the FP32 main
 * accumulator with ordinary FADDs.
 *
 * Technique (one per file):
 *   - Block tile 128 (m) x 128 (n), K-step = K-chunk = 32; 384 threads =
 *     3 warpgroups, warp-specialized as in gemm_bf16_wgmma:
 *       warpgroup 0, the "split" group (setmaxnreg 56): thread 0 issues the
 *         TMA loads; all 128 threads turn the FP32 B tile into TF32 parts
 *         in shared memory (thread n takes B row n);
 *       warpgroups 1, 2, consumers (setmaxnreg 224): 64 rows of m each and
 *         all 128 columns; wgmma m64n128k8 .tf32 with A FROM REGISTERS:
 *         each thread loads its FP32 A fragment from the TMA tile, splits
 *         it in registers, and feeds big/small/cross straight to wgmma.
 *     Per thread: 64 main + 64 chunk accumulators (m64n256 would need 256:
 *     it does not fit), 16 raw A values, 32 A-part words (48 when the
 *     step's A values are not all tame).
 *   - Why A in registers: with both operands in shared memory the split
 *     tiles of A would be written (3 x 16 KB a step) and read by wgmma
 *     again; from registers A costs one 16 KB read a step. (Measured at
 *     8192^3: shared-memory pipe ~58% busy, tensor pipe ~65%.)
 *   - K permutation (free): a k8 instruction may take any 8 K indices as
 *     long as A and B agree. Instruction q (0..3) of a K-step uses raw k =
 *     8*(i%4) + 4*(i/4) + q for its K index i (0..7), so a thread's A values for
 *     the whole step are two 16-byte runs per row (4 LDS.128 a step
 *     instead of 16 LDS.32), and the split group writes B's parts with the
 *     matching permutation: a 4x4 register transpose of four raw 16-byte
 *     chunks into four stored chunks (same LDS/STS count as no
 *     permutation, conflict-free in the 128-byte swizzle).
 *   - Tame tiles (the common case). The split group splits speculatively
 *     with split_fast and redoes a half-row exactly when it held a value
 *     that is not tame; a reduction over the 128 split threads (bar.red.or)
 *     says whether any row of the B tile was, and only then is cross B
 *     written (from big B); otherwise the consumers point the cross chain
 *     at big B (cross == big for finite values). Consumers decide per
 *     warp and step (a vote; both splits feed the same wgmma sequence)
 *     between split_fast and split_words for their A values.
 *   - Shared memory (224 KB): a ring of S = 4 TMA stages (A 128x32 FP32 +
 *     B 128x32 FP32, 128-byte swizzle, 32 KB a stage) and a ring of P = 3
 *     part sets (B small, B cross: 32 KB a set). B's big part is written in
 *     place over the raw B tile (same layout, same addresses), so a stage
 *     lives until the consumers' wgmmas of its step are done. S = P + 1:
 *     the split group's wait for part set (t % P) to be free is also the
 *     wait for TMA slot (t + 1) % S, so thread 0 issues load t + 1 there
 *     without ever blocking the split on a second barrier.
 *   - mbarriers: full[s] (1 arrival + the stage's 32 KB of TMA bytes; NT:
 *     4 arrivals, see TmaSpread),
 *     pfull[p] (128 split-thread arrivals, each after its own
 *     fence.proxy.async: generic-proxy writes read by wgmma), pempty[p]
 *     (8 consumer-warp arrivals once wgmma_wait shows the step's wgmmas
 *     done). Consumers wait full (for A) and pfull (for B's parts).
 *   - Consumer step: wait full, load the 16 A values, vote, wait pfull;
 *     per substep (4 a step): wait until at most 2 wgmma groups are in
 *     flight, split its 4 A values (3 words each), issue cross*small and
 *     small*cross as one group; then the 4 big*big products as one group
 *     (GS_3XTF32_DEFER_BIG), drain, release the part set, 64 FADDs.
 *     (GS_3XTF32_V2=1, the loop measured first: all 16 values split
 *     first, the 12 wgmmas in one group, the two consumers taking turns;
 *     2-8% slower, see the NOTES.)
 *   - Epilogue through the drained TMA ring: accumulators staged
 *     column-major (column pitch 68 floats: conflict-free fragment writes),
 *     then runs of 4 rows per thread: alpha * acc (+ beta * C when
 *     beta != 0) (+ bias), 16-byte loads and stores, a warp writing two
 *     256-byte column segments. C is never read when beta == 0.
 *   - Grouped tile raster (GROUP_M tile rows share B panels in L2).
 *     Non-persistent grid, one CTA per SM. No atomics, no split-K:
 *     deterministic bits.
 *
 * Constraints (gs_gemm_f32_3xtf32_supports, see gemm_f32_3xtf32.h): TN
 * (GS_3XTF32_LAYOUTS=1: also NN, NT, TT; see "layouts" below, before the
 * kernel); m % 128, n % 128, k % 32; 16-byte aligned pointers; leading dims
 * multiples of 4 elements. Epilogue index math is 64-bit; TMA coordinates
 * are 32-bit element indices (m, n, k < 2^31).
 *
 * Target sm_90a only (wgmma, setmaxnreg). Debug build: -DGS_DEBUG_WAIT (or
 * -DGS_SM90_BOUNDED_WAIT=1) makes every mbarrier wait trap with a message
 * after ~2^26 polls instead of hanging.
 */
#include "gemm_f32_3xtf32.h"

#include <cuda.h> /* CUtensorMap and its enums: types only, libcuda is not linked */
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <type_traits>

#if defined(GS_DEBUG_WAIT) && !defined(GS_SM90_BOUNDED_WAIT)
#define GS_SM90_BOUNDED_WAIT 1
#endif
#include "gs_launch.h"
#include "sm90_host.h"
#include "sm90_ptx.cuh"
#include "tf32_split.h"

namespace gs_f32_3xtf32 {

using namespace gs_sm90;

/* GS_3XTF32_* macros exist only for tuning and diagnostic builds
 * (tools/build-bench-3xtf32.sh EXTRA_FLAGS); the library builds the
 * defaults. What each variant measured is in gemm_f32_3xtf32.NOTES.md.
 *   GS_3XTF32_CHUNK_STEPS  K-steps of 32 per tensor-core accumulation chunk
 *                          (1 by default: chunks of 32; 2, 4, 8 need
 *                          GS_3XTF32_V2=0);
 *   GS_3XTF32_FAST         1 (default): split_fast for tame values, cross B
 *                          written only for tiles with a non-tame value;
 *                          0: split_words everywhere, cross B always (the
 *                          first version);
 *   GS_3XTF32_SPEC         split group: 1 (default) splits speculatively
 *                          with split_fast and redoes a non-tame half-row;
 *                          0 checks first, then takes one of the two paths;
 *   GS_3XTF32_V2           consumer loop: 0 (default) the chunk loop with
 *                          per-substep groups; 1: one chunk per K-step,
 *                          its 12 wgmmas issued together (split first),
 *                          next A loaded before the drain (needs
 *                          CHUNK_STEPS 1 and FAST);
 *   GS_3XTF32_ORDER        V2: 1 (default) the 8 correction products before
 *                          the 4 big*big ones; 0 interleaved per substep;
 *   GS_3XTF32_PINGPONG     V2: 1 (default) the two consumers take turns
 *                          issuing their steps' wgmmas (named barriers 5, 6);
 *   GS_3XTF32_INTERLEAVE   V2: split substep j just before its wgmmas
 *                          instead of all four first (0 by default);
 *   GS_3XTF32_DEFER_BIG    V2=0: the big*big wgmmas of a step after all its
 *                          corrections (the ORDER idea in the chunk loop;
 *                          1 by default);
 *   GS_3XTF32_INFLIGHT     V2=0: wgmma groups left in flight at each
 *                          substep's wait (0..3; 2 by default);
 *   GS_3XTF32_SPLIT_REGS / _CONSUMER_REGS  the setmaxnreg split (56/224;
 *                          40/232 spills in the split group);
 *   GS_3XTF32_GROUP_M      tile rows per raster group;
 *   GS_3XTF32_LAYOUTS      1 (default): the kernel is a template over the
 *                          layout and the launcher takes TN, NN, NT and
 *                          TT; 0: TN only. Needs FAST and chunks of one
 *                          K-step (the defaults).
 *   GS_3XTF32_NT_SPLIT_NM  NT's B split: 0 (default) one LDS.32 a value
 *                          (split_row_lay); 1 split_nm, as TT (measured
 *                          3-6% slower in NT, 2026-12-03).
 *   GS_3XTF32_TMA_SPREAD   a mask of layouts (bit 1 NN, 2 NT, 3 TT) whose
 *                          stage TMA loads are spread over lane 0 of the
 *                          four split warps (load_stage_part) instead of
 *                          thread 0 issuing all of them: 4 (default), NT
 *                          only. Measured 2026-12-03 (4096^3 / 8192^3, x
 *                          SGEMM): NT 1.96/1.96 -> 2.01-2.03/2.02, NN
 *                          2.06/2.14 -> 2.00/2.08, TT 2.06/2.09 -> 1.97/1.99.
 *   GS_3XTF32_SPLIT_SUMS   V2=0 with DEFER_BIG: 1 sums a K-step's corrections
 *                          and its big*big products in the tensor cores
 *                          separately (drain, add the corrections to the
 *                          main accumulator, then the big*big products from
 *                          zero in the same registers): the remedy for the
 *                          wide-data error that a model of the tensor cores'
 *                          truncating accumulation predicts (NOTES, next
 *                          step 1). Measured 2026-12-03: wide error to
 *                          0.90-1.08x SGEMM's on the five TN shapes the
 *                          model named, the split's floor elsewhere
 *                          untouched, randn error up ~30%, speed -1 to
 *                          -13% (below 2x): not the default.
 *   GS_3XTF32_SMALL_SMALL  chunk loop (V2=0) only: 1 adds the fourth
 *                          product, small_a x small_b, to the corrections
 *                          (an experiment on the split's error floor: the
 *                          dropped term is up to 2^-22 of a product).
 *                          Measured 2026-12-03: -6 to -18% speed; with
 *                          SPLIT_SUMS wide error still up to 8.9x SGEMM's
 *                          (NOTES, fourth round): not the default.
 *   GS_3XTF32_SPEC_LAY     a mask of layouts (bit 1 NN, 2 NT, 3 TT) whose B
 *                          split (split_row_lay, split_nm) splits
 *                          speculatively, as SPEC does for TN, with the
 *                          tame test as a max tree off the critical path:
 *                          4 (default), NT only. Measured 2026-12-03 (x
 *                          SGEMM, 4096^3 / 8192^3, two runs): NT
 *                          2.014/2.008 -> 2.040/2.031, NN unchanged, TT
 *                          2.064/2.088 -> 2.038/2.062.
 *   GS_3XTF32_CONSUMER_TREE a mask of layouts (bit 0 TN) whose consumers
 *                          test their A values for tameness with a max tree
 *                          instead of a chain of 16: 1 (default), TN only.
 *                          Measured: TN 2.11/2.21 -> 2.19/2.30 (+3-4% at
 *                          K >= 2048, -1 to +1% at K <= 1024); NN, NT 0 to
 *                          -1%, TT -1 to -2%. */
#ifndef GS_3XTF32_GROUP_M
#define GS_3XTF32_GROUP_M 8
#endif
#ifndef GS_3XTF32_CHUNK_STEPS
#define GS_3XTF32_CHUNK_STEPS 1
#endif
#ifndef GS_3XTF32_SPLIT_REGS
#define GS_3XTF32_SPLIT_REGS 56
#endif
#ifndef GS_3XTF32_CONSUMER_REGS
#define GS_3XTF32_CONSUMER_REGS 224
#endif
#ifndef GS_3XTF32_INFLIGHT
#define GS_3XTF32_INFLIGHT 2
#endif
#ifndef GS_3XTF32_FAST
#define GS_3XTF32_FAST 1
#endif
#ifndef GS_3XTF32_V2
#define GS_3XTF32_V2 0
#endif
#ifndef GS_3XTF32_SPEC
#define GS_3XTF32_SPEC 1
#endif
#ifndef GS_3XTF32_INTERLEAVE
#define GS_3XTF32_INTERLEAVE 0
#endif
#ifndef GS_3XTF32_DEFER_BIG
#define GS_3XTF32_DEFER_BIG 1
#endif
#ifndef GS_3XTF32_ORDER
#define GS_3XTF32_ORDER 1
#endif
#ifndef GS_3XTF32_PINGPONG
#define GS_3XTF32_PINGPONG 1
#endif
#ifndef GS_3XTF32_LAYOUTS
#define GS_3XTF32_LAYOUTS 1
#endif
#ifndef GS_3XTF32_NT_SPLIT_NM
#define GS_3XTF32_NT_SPLIT_NM 0
#endif
#ifndef GS_3XTF32_TMA_SPREAD
#define GS_3XTF32_TMA_SPREAD 4 /* 1 << LAY_NT */
#endif
#ifndef GS_3XTF32_SPLIT_SUMS
#define GS_3XTF32_SPLIT_SUMS 0
#endif
#ifndef GS_3XTF32_SMALL_SMALL
#define GS_3XTF32_SMALL_SMALL 0
#endif
#ifndef GS_3XTF32_SPEC_LAY
#define GS_3XTF32_SPEC_LAY 4 /* 1 << LAY_NT */
#endif
#ifndef GS_3XTF32_CONSUMER_TREE
#define GS_3XTF32_CONSUMER_TREE 1 /* 1 << LAY_TN */
#endif

/* Tile configuration: constexpr data, not scattered literals. */
struct Cfg {
  static constexpr int BM = 128, BN = 128;
  static constexpr int BK = 32;                      /* K-step: one 128-byte FP32 swizzle row */
  static constexpr int CHUNK_STEPS = GS_3XTF32_CHUNK_STEPS; /* K-chunk = 32 * CHUNK_STEPS */
  static constexpr int S = 4;                        /* TMA stages (raw A, raw B / big B) */
  static constexpr int P = 3;                        /* part sets (small B, cross B) */
  static constexpr int CONSUMERS = 2;                /* consumer warpgroups */
  static constexpr int THREADS = 128 * (CONSUMERS + 1);
  static constexpr int WG_M = BM / CONSUMERS;        /* 64: one wgmma m64 */
  static constexpr int WG_N = BN;                    /* wgmma n128 */
  static constexpr int ACC = WG_M * WG_N / 128;      /* 64 FP32 per thread, twice */
  static constexpr int KSUB = BK / 8;                /* k8 wgmma substeps per K-step: 4 */
  static constexpr int INFLIGHT = GS_3XTF32_INFLIGHT; /* wgmma groups left in flight */
  static constexpr int SPLIT_REGS = GS_3XTF32_SPLIT_REGS, CONSUMER_REGS = GS_3XTF32_CONSUMER_REGS;
  static constexpr int GROUP_M = GS_3XTF32_GROUP_M;
  static constexpr int EPI_LD = WG_M + 4;            /* floats per staged column */
  static constexpr uint32_t A_BYTES = BM * BK * 4, B_BYTES = BN * BK * 4;
  static constexpr uint32_t STAGE_TX = A_BYTES + B_BYTES;
  static constexpr int CONSUMER_WARPS = CONSUMERS * 4; /* arrivals that free a part set */
  static constexpr int SPLIT_THREADS = 128;            /* arrivals that fill a part set */
};
static_assert(Cfg::BK * 4 == 128, "a K-step row is exactly one 128-byte swizzle span");
static_assert(Cfg::KSUB == 4, "the K permutation maps 4 substeps onto 4-float chunks");
static_assert(Cfg::BN == Cfg::SPLIT_THREADS, "split thread n takes B row n");
static_assert(Cfg::WG_M == 64 && Cfg::WG_N == 128 && Cfg::ACC == 64, "wgmma m64n128k8");
static_assert(Cfg::BM <= 256 && Cfg::BN <= 256, "TMA box dims are at most 256");
static_assert(Cfg::S == Cfg::P + 1, "the part-set wait also frees the next TMA slot");
static_assert(Cfg::CHUNK_STEPS >= 1, "at least one K-step per chunk");
static_assert(!GS_3XTF32_SPLIT_SUMS ||
                  (!GS_3XTF32_V2 && GS_3XTF32_DEFER_BIG && GS_3XTF32_CHUNK_STEPS == 1),
              "SPLIT_SUMS is built for the chunk loop with deferred big*big, one K-step a chunk");
static_assert(!GS_3XTF32_SMALL_SMALL || !GS_3XTF32_V2, "SMALL_SMALL is built for the chunk loop");
static_assert(Cfg::INFLIGHT >= 0 && Cfg::INFLIGHT < Cfg::KSUB,
              "substep j reuses register set j: its last group (one K-step back) must retire");
static_assert(Cfg::SPLIT_REGS * 128 + Cfg::CONSUMER_REGS * 128 * Cfg::CONSUMERS <= 65536,
              "setmaxnreg budgets fit the register file");
static_assert(Cfg::SPLIT_REGS * 128 + Cfg::CONSUMER_REGS * 128 * Cfg::CONSUMERS <=
                  168 * Cfg::THREADS,
              "the budgets fit in the 168 registers a 384-thread CTA starts with");
static_assert((Cfg::EPI_LD * 2) % 32 == 8, "staged column pitch: fragment writes conflict-free");
static_assert((Cfg::EPI_LD * 4) % 16 == 0, "staged columns keep float4 alignment");
static_assert(GS_GEMM_F32_3XTF32_ALIGN_M % Cfg::BM == 0, "documented m class");
static_assert(GS_GEMM_F32_3XTF32_ALIGN_N % Cfg::BN == 0, "documented n class");
static_assert(GS_GEMM_F32_3XTF32_ALIGN_K % Cfg::BK == 0, "documented k class");

/* The shared-memory layout; sizeof(Smem) + 1024 (alignment slack) is the
 * launch's dynamic shared memory. Every tile is 16 KB and 1024-byte aligned
 * (128B swizzle atom). The epilogue reuses a[] and b[] once the consumers
 * are past their last wgmma. */
struct Smem {
  alignas(1024) float a[Cfg::S][Cfg::BM * Cfg::BK];   /* raw A (TMA) */
  alignas(1024) float b[Cfg::S][Cfg::BN * Cfg::BK];   /* raw B (TMA), then big B in place */
  alignas(1024) float bs[Cfg::P][Cfg::BN * Cfg::BK];  /* small B */
  alignas(1024) float bc[Cfg::P][Cfg::BN * Cfg::BK];  /* cross B (big, 0 where non-finite) */
  uint64_t full[Cfg::S];
  uint64_t pfull[Cfg::P];
  uint64_t pempty[Cfg::P];
  uint32_t pwild[Cfg::P]; /* GS_3XTF32_FAST: part set's cross tile written (B has a non-tame value) */
};
static_assert(sizeof(float) * Cfg::BM * Cfg::BK == Cfg::A_BYTES, "");
static_assert(Cfg::A_BYTES % 1024 == 0 && Cfg::B_BYTES % 1024 == 0,
              "every tile stays 1024-byte aligned");
static_assert((size_t)Cfg::CONSUMERS * Cfg::BN * Cfg::EPI_LD * 4 <=
                  (size_t)Cfg::S * (Cfg::A_BYTES + Cfg::B_BYTES),
              "the epilogue staging fits in the TMA ring");
constexpr size_t kSmemBytes = sizeof(Smem) + 1024;
static_assert(kSmemBytes <= 227 * 1024, "fits the sm_90 per-block shared memory limit");

struct Params {
  int m, n, k;
  const float *C;
  float *D;
  int64_t ldc, ldd;
  float alpha, beta;
  const float *alpha_dev, *beta_dev; /* non-NULL: read on the device */
  const float *bias;
};

/* Barrier tags for the bounded-wait debug message. */
enum { TAG_FULL_SPLIT = 1, TAG_FULL_CONS = 2, TAG_PFULL = 3, TAG_PEMPTY = 4 };

__device__ __forceinline__ float4 ld_shared_f4(const float *p) {
  return *reinterpret_cast<const float4 *>(p);
}
__device__ __forceinline__ void st_shared_u4(float *p, uint4 v) {
  *reinterpret_cast<uint4 *>(p) = v;
}
__device__ __forceinline__ float f4_at(const float4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
__device__ __forceinline__ void u4_set(uint4 &v, int i, uint32_t x) {
  if (i == 0) v.x = x;
  else if (i == 1) v.y = x;
  else if (i == 2) v.z = x;
  else v.w = x;
}

/* The three TF32 words of one FP32 value, as the tensor core reads them:
 * exactly gs_tf32_split (kernels/tf32_split.h: big = TF32 round to nearest,
 * ties away, truncated where rounding would reach Inf; small = TF32 round of
 * x - big; cross = big, or 0 for Inf/NaN, whose small is 0 too), plus one
 * rule of its own: a NaN whose payload lies only in the low 13 bits (which
 * the tensor core ignores) would read as Inf, so its big word gets the
 * quiet bit.
 * Written branch-free from tf32_split.h's primitives because it runs 8192
 * times per CTA per K-step: ~14 SASS instructions a value against ~23 for
 * gs_tf32_split's branches (a third of the issue slots of the K-step's
 * tensor time). Rounding the magnitude and clamping it to the largest
 * finite TF32 (0x7f7fe000) is gs_tf32_round's "truncate where rounding
 * would overflow"; x - big never comes near overflow, so small needs no
 * clamp. Checked equal to gs_tf32_split (+ the NaN rule) for all 2^32
 * inputs on the CPU: the program is in gemm_f32_3xtf32.NOTES.md and
 * extracts this function from between the two marker lines. */
struct Words {
  uint32_t big, small, cross;
};
// BEGIN gs_3xtf32_split_words
__host__ __device__ __forceinline__ Words split_words(float x) {
  const uint32_t u = gs_tf32_bits(x);
  const uint32_t mag = u & 0x7fffffffu;
  uint32_t rm = (mag + (1u << (GS_TF32_DROP_BITS - 1))) & ~GS_TF32_LOW_MASK;
  rm = rm < 0x7f7fe000u ? rm : 0x7f7fe000u;
  const uint32_t r = rm | (u & 0x80000000u);
  const uint32_t d = gs_tf32_bits(x - gs_tf32_float(r));
  const uint32_t sm = (d + (1u << (GS_TF32_DROP_BITS - 1))) & ~GS_TF32_LOW_MASK;
  const bool fin = mag < 0x7f800000u;
  Words w;
  w.big = fin ? r : (mag > 0x7f800000u ? (u | 0x00400000u) : u);
  w.small = fin ? sm : 0u;
  w.cross = fin ? r : 0u;
  return w;
}
// END gs_3xtf32_split_words

/* The fast form of split_words for a "tame" value: |x| < 0x7f7ff000 (finite,
 * and its TF32 rounding does not reach Inf). Then the rounding needs no
 * clamp, no sign handling (the carry never reaches the sign bit) and no
 * NaN rule, and cross == big: 5 instructions instead of ~14. Equal to
 * split_words for every tame input (checked for all of them on the CPU,
 * see the NOTES). */
// BEGIN gs_3xtf32_split_fast
#define kTameLimit 0x7f7ff000u /* |x| bits below this: tame */
__host__ __device__ __forceinline__ Words split_fast(float x) {
  const uint32_t r = (gs_tf32_bits(x) + (1u << (GS_TF32_DROP_BITS - 1))) & ~GS_TF32_LOW_MASK;
  const uint32_t d = gs_tf32_bits(x - gs_tf32_float(r));
  Words w;
  w.big = r;
  w.small = (d + (1u << (GS_TF32_DROP_BITS - 1))) & ~GS_TF32_LOW_MASK;
  w.cross = r;
  return w;
}
// END gs_3xtf32_split_fast
/* max(m, |x|), NaN if either is NaN (max.NaN): a running "is everything
 * tame" test at one FMNMX a value; tame(m) is false for NaN and Inf. */
__device__ __forceinline__ float max_abs_nan(float m, float x) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(m), "f"(fabsf(x)));
  return r;
}
__device__ __forceinline__ bool tame(float m) { return m < __uint_as_float(kTameLimit); }
/* max(|a|, |b|, |c|, |d|), NaN if any is NaN: a tree, not a chain. */
__device__ __forceinline__ float max_abs4(float a, float b, float c, float d) {
  return max_abs_nan(max_abs_nan(fabsf(a), b), max_abs_nan(fabsf(c), d));
}

/* Arrive at named barrier `id` (of `count` threads) without waiting. */
__device__ __forceinline__ void named_barrier_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/* OR of `pred` over the `count` threads that meet at named barrier `id`. */
__device__ __forceinline__ uint32_t bar_red_or(int id, int count, uint32_t pred) {
  uint32_t r;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\n"
      "barrier.cta.red.or.pred q, %2, %3, p;\n"
      "selp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(r)
      : "r"(pred), "r"(id), "r"(count)
      : "memory");
  return r;
}

/* Pin values in registers at this point of the program: the split of a
 * substep is not hoisted above the wgmma wait that frees its registers. */
__device__ __forceinline__ void reg_pin4(float &a, float &b, float &c, float &d) {
  asm volatile("" : "+f"(a), "+f"(b), "+f"(c), "+f"(d));
}

__device__ __forceinline__ void reg_pin4u(uint32_t (&a)[4]) {
  asm volatile("" : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3]));
}

/* threadIdx.x read anew (not kept in a register across the role split). */
__device__ __forceinline__ uint32_t tid_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(r));
  return r;
}

/* Grouped raster: GROUP_M tile rows (of m) share the B panels in L2. Each
 * warpgroup computes this after its setmaxnreg (nothing computed before the
 * role split stays live across it). */
__device__ __forceinline__ void tile_origin(const Params &p, int &m0, int &n0) {
  const int tiles_m = p.m / Cfg::BM, tiles_n = p.n / Cfg::BN;
  const int bid = blockIdx.x;
  const int per_group = Cfg::GROUP_M * tiles_n;
  const int group = bid / per_group;
  const int first_m = group * Cfg::GROUP_M;
  const int gsize = min(tiles_m - first_m, Cfg::GROUP_M);
  const int in_group = bid - group * per_group;
  m0 = (first_m + in_group % gsize) * Cfg::BM;
  n0 = (in_group / gsize) * Cfg::BN;
}

#if GS_3XTF32_LAYOUTS
/* ---------------------------------------------- layouts NN, NT, TT
 * (GS_3XTF32_LAYOUTS=1, the default; =0 builds TN only).
 * cuBLAS column-major, D = alpha op(A) op(B) + beta C:
 *   TN  A stored k x m (K-major), B stored k x n (K-major)  -- the default's
 *   NN  A stored m x k (M-major), B stored k x n (K-major)
 *   NT  A stored m x k (M-major), B stored n x k (N-major)
 *   TT  A stored k x m (K-major), B stored n x k (N-major)
 * A reaches wgmma through registers, so an M-major A tile needs only another
 * TMA box and other fragment addresses. TF32 wgmma reads B from shared
 * memory K-major only (no transpose for 32-bit types); the split group
 * rewrites B anyway, so for NN, NT, TT it reads the raw tile in its stored
 * layout and writes K-major big and small tiles (NN, NT: split_row_lay, a
 * thread per B row; TT: split_nm, 16-byte loads of four n). Not in place
 * (an N-major raw tile has another layout): big goes to the part set's
 * cross slot (bc[q]) and, for a tile with a non-tame value, cross is written
 * over the raw tile (b[s]) once all 128 split threads have read it (after
 * the wild-flag reduction, a barrier among them).
 * MN-major tiles (A in NN/NT, B in NT/TT) are 4 TMA boxes of 32 (m|n,
 * contiguous, one 128-byte row) x 32 (k), 128-byte swizzle, 4 KB each,
 * 1024-byte aligned: element (r, k) at box r/32, row k, column r%32.
 * K permutation: the default's (PERM 0: K index i of substep j is raw
 * k = 8(i%4) + 4(i/4) + j) where A is K-major (TN, TT), so A's fragment
 * loads stay 4 LDS.128; PERM 1 (raw k = 8j + 2(i%4) + i/4) where A is
 * M-major (NN, NT): in each of a thread's 16 scalar A loads of a step the
 * four tq lanes see swizzle phases 2tq + hi, which with the m/4 bit of
 * their rows (g/4) give 8 distinct 16-byte chunks: conflict-free (the
 * default's permutation would put all four on phase j: 4-way conflicts).
 * The functions between the markers are host+device: the CPU emulation in
 * gemm_f32_3xtf32.NOTES.md compiles them as they are (results, and the bank
 * groups of the split's 16-byte accesses). Measured on the H200: NOTES. */
// BEGIN gs_3xtf32_layouts
enum Layout { LAY_TN = 0, LAY_NN = 1, LAY_NT = 2, LAY_TT = 3 };
template <int LAY>
struct Lay {
  static constexpr bool A_MN = LAY == LAY_NN || LAY == LAY_NT; /* A stored m x k */
  static constexpr bool B_NM = LAY == LAY_NT || LAY == LAY_TT; /* B stored n x k */
  static constexpr int PERM = A_MN ? 1 : 0;                    /* K permutation */
  /* B split by split_nm (LDS.128 of four n) rather than split_row_lay:
   * TT; NT only with GS_3XTF32_NT_SPLIT_NM (measured slower there). */
  static constexpr bool SPLIT_NM = LAY == LAY_TT || (LAY == LAY_NT && GS_3XTF32_NT_SPLIT_NM);
};
/* Float offset of element (row, col), col < 32, of a 1024-byte aligned
 * tile of 128-byte rows written with the 128-byte swizzle: 16-byte chunk
 * col/4 of row `row` sits at chunk (col/4) ^ (row % 8). */
__host__ __device__ __forceinline__ int sw128(int row, int col) {
  return row * 32 + ((((col >> 2) ^ row) & 7) << 2) + (col & 3);
}
static constexpr int MN_BOX = 32;                 /* m|n extent of an MN-major box */
static constexpr int MN_BOX_FLOATS = MN_BOX * 32; /* x 32 k: 4 KB */
/* Element (r, k) of an MN-major tile (r: m or n inside the block tile). */
__host__ __device__ __forceinline__ int mn_off(int r, int k) {
  return (r / MN_BOX) * MN_BOX_FLOATS + sw128(k, r % MN_BOX);
}
/* TMA box i (0..3) of an MN-major tile for K-step kt of the block tile at
 * r0 (m0 or n0): tensor coordinates (inner m|n, outer k) and the box's
 * float offset in the tile. */
__host__ __device__ __forceinline__ void mn_box(int i, int kt, int r0, int &c0, int &c1,
                                                int &dst) {
  c0 = r0 + MN_BOX * i;
  c1 = kt * 32;
  dst = i * MN_BOX_FLOATS;
}
/* Raw k of the wgmma A fragment value of substep j, K index tq + 4*hi. */
template <int PERM>
__host__ __device__ __forceinline__ int frag_k(int j, int tq, int hi) {
  return PERM ? 8 * j + 2 * tq + hi : 8 * tq + 4 * hi + j;
}
/* The split of one B row in two passes p of four stored 16-byte chunks
 * (chunk c, element e: stored column 4c + e = K index 4(c%2) + e of substep
 * c/2). Pass p writes chunks split_chunk(p, cc), cc = 0..3; element e of
 * chunk split_chunk(p, cc) is raw k = split_kbase(p) + split_klocal(cc, e)
 * (register indices independent of p: the pass loop stays rolled). */
template <int PERM>
__host__ __device__ __forceinline__ int split_chunk(int p, int cc) {
  return PERM ? 4 * p + cc : 2 * cc + p;
}
template <int PERM>
__host__ __device__ __forceinline__ int split_kbase(int p) {
  return PERM ? 16 * p : 4 * p;
}
template <int PERM>
__host__ __device__ __forceinline__ int split_klocal(int cc, int e) {
  return PERM ? 8 * (cc >> 1) + 2 * e + (cc & 1) : 8 * e + cc;
}
__host__ __device__ __forceinline__ float4 ld4(const float *p) {
  return *reinterpret_cast<const float4 *>(p);
}
/* One 16-byte shared store. On the device it is written as st.shared.v4:
 * from a plain uint4 store the compiler emitted four 4-byte stores where it
 * could not prove the address 16-byte aligned (the split's first row
 * chunk), and those were 4-way bank conflicts (ncu, 2026-12-03). */
__host__ __device__ __forceinline__ void st4(float *p, uint4 v) {
#ifdef __CUDA_ARCH__
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_u32(p)), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
#else
  *reinterpret_cast<uint4 *>(p) = v;
#endif
}
__host__ __device__ __forceinline__ float f4_get(const float4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
__host__ __device__ __forceinline__ void u4_put(uint4 &v, int i, uint32_t x) {
  if (i == 0) v.x = x;
  else if (i == 1) v.y = x;
  else if (i == 2) v.z = x;
  else v.w = x;
}
/* max(m, |x|), NaN if either is NaN: max_abs_nan on the device. */
__host__ __device__ __forceinline__ float max_abs_nan_hd(float m, float x) {
#ifdef __CUDA_ARCH__
  return max_abs_nan(m, x);
#else
  const float a = x < 0.f ? -x : x;
  return (m != m || a != a) ? a + m : (m > a ? m : a);
#endif
}
/* max_abs4 for host and device: the speculative splits' tame test as a
 * tree (depth 4 over 16 values) rather than a chain of 16 dependent max. */
__host__ __device__ __forceinline__ float max_abs4_hd(float a, float b, float c, float d) {
  return max_abs_nan_hd(max_abs_nan_hd(fabsf(a), b), max_abs_nan_hd(fabsf(c), d));
}
/* One split thread's 16 values x (a half-row's worth) through emit, which
 * splits and stores them: with split_fast when all are tame, else with
 * split_words (exact). SPEC: split fast first, test with a max tree, redo
 * exactly if needed (same addresses, program order); otherwise test first
 * (a chain of max), then split once. Returns 1 if a value was not tame. */
template <bool SPEC, typename Emit>
__host__ __device__ __forceinline__ uint32_t split_tame_or_exact(const float (&x)[4][4],
                                                                 Emit &&emit) {
  if constexpr (SPEC) {
    emit(std::false_type{});
    float m4[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) m4[i] = max_abs4_hd(x[i][0], x[i][1], x[i][2], x[i][3]);
    if (max_abs4_hd(m4[0], m4[1], m4[2], m4[3]) < gs_tf32_float(kTameLimit)) return 0;
    emit(std::true_type{});
    return 1;
  } else {
    float mx = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) mx = max_abs_nan_hd(mx, x[i][e]);
    if (mx < gs_tf32_float(kTameLimit)) {
      emit(std::false_type{});
      return 0;
    }
    emit(std::true_type{});
    return 1;
  }
}
/* Split thread n: row n of B (NN: from the K-major raw tile; NT: from the
 * N-major one, one LDS.32 a value) into big (bgo) and small (smo), K-major,
 * 128-byte swizzle, permuted for PERM. Returns 1 if the row held a value
 * that is not tame (then it was split exactly, with split_words). */
template <int LAY>
__host__ __device__ __forceinline__ uint32_t split_row_lay(const float *raw, float *bgo,
                                                           float *smo, int n) {
  constexpr int PERM = Lay<LAY>::PERM;
  constexpr bool SPEC = (GS_3XTF32_SPEC_LAY >> LAY) & 1;
  static_assert(Lay<LAY>::B_NM || PERM == 1, "a K-major raw B is split here only for NN");
  uint32_t wild = 0;
#pragma unroll 1
  for (int p = 0; p < 2; ++p) {
    const int kb = split_kbase<PERM>(p);
    float r[4][4]; /* [cc][e] */
    if (Lay<LAY>::B_NM) {
#pragma unroll
      for (int cc = 0; cc < 4; ++cc)
#pragma unroll
        for (int e = 0; e < 4; ++e) r[cc][e] = raw[mn_off(n, kb + split_klocal<PERM>(cc, e))];
    } else {
      /* PERM 1, pass p: raw k 16p .. 16p + 15, four raw chunks of row n */
      float4 v[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) v[i] = ld4(raw + sw128(n, kb + 4 * i));
#pragma unroll
      for (int cc = 0; cc < 4; ++cc)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int kl = split_klocal<PERM>(cc, e);
          r[cc][e] = f4_get(v[kl >> 2], kl & 3);
        }
    }
    /* Split and store the half-row (fast or exact: one branch per half-row). */
    auto emit = [&](auto exact) {
#pragma unroll
      for (int cc = 0; cc < 4; ++cc) {
        uint4 vb, vs;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const Words w = decltype(exact)::value ? split_words(r[cc][e]) : split_fast(r[cc][e]);
          u4_put(vb, e, w.big);
          u4_put(vs, e, w.small);
        }
        const int c = split_chunk<PERM>(p, cc);
        st4(bgo + sw128(n, 4 * c), vb);
        st4(smo + sw128(n, 4 * c), vs);
      }
    };
    if (split_tame_or_exact<SPEC>(r, emit)) wild = 1;
  }
  return wild;
}
/* Split thread t (0..127) of an N-major raw B tile (NT, TT) into big (bgo)
 * and small (smo), K-major, 128-byte swizzle, permuted for PERM: the same
 * tiles split_row_lay writes, but each raw load is an LDS.128 of four
 * consecutive n at one k instead of one scalar. Warp w takes box w
 * (n = 32w .. 32w + 31); lane 8p + q takes rows n0 .. n0 + 3 (n0 = 32w +
 * 4q, one raw 16-byte chunk) and the eight raw k of wgmma substep
 * j = p ^ (q >> 2): the stored chunks 2j and 2j + 1 of its four rows, one
 * chunk per pass. Which of the two a pass takes is flipped by
 * b = (q >> 1) & 1. With this choice of (j, b) the eight lanes of each
 * quarter-warp touch eight different 16-byte bank groups in every load and
 * every store, for PERM 0 and 1 (an exhaustive search over such lane
 * mappings, gemm_f32_3xtf32.NOTES.md): no bank conflicts. Returns 1 if
 * the thread's values held one that is not tame (split exactly). */
template <int PERM>
__host__ __device__ __forceinline__ uint32_t split_nm(const float *raw, float *bgo, float *smo,
                                                      int t) {
  /* An N-major B is NT's (PERM 1) or TT's (PERM 0). */
  constexpr bool SPEC = (GS_3XTF32_SPEC_LAY >> (PERM ? LAY_NT : LAY_TT)) & 1;
  const int w = t >> 5, q = t & 7;
  const int j = ((t >> 3) & 3) ^ (q >> 2), b = (q >> 1) & 1;
  const int n0 = 32 * w + 4 * q;
  const float *box = raw + w * MN_BOX_FLOATS;
  uint32_t wild = 0;
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass) {
    const int h = pass ^ b; /* stored chunk 2j + h: K index 4h + e of substep j */
    float4 v[4];            /* v[e]: raw k of K index 4h + e, rows n0 .. n0 + 3 */
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = ld4(box + sw128(frag_k<PERM>(j, e, h), 4 * q));
    auto emit = [&](auto exact) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        uint4 vb, vs;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float x = f4_get(v[e], r);
          const Words wd = decltype(exact)::value ? split_words(x) : split_fast(x);
          u4_put(vb, e, wd.big);
          u4_put(vs, e, wd.small);
        }
        st4(bgo + sw128(n0 + r, 4 * (2 * j + h)), vb);
        st4(smo + sw128(n0 + r, 4 * (2 * j + h)), vs);
      }
    };
    const float x[4][4] = {{v[0].x, v[0].y, v[0].z, v[0].w},
                           {v[1].x, v[1].y, v[1].z, v[1].w},
                           {v[2].x, v[2].y, v[2].z, v[2].w},
                           {v[3].x, v[3].y, v[3].z, v[3].w}};
    if (split_tame_or_exact<SPEC>(x, emit)) wild = 1;
  }
  return wild;
}
/* Cross of row n (for a tile with a non-tame value): big, 0 where big is
 * Inf/NaN (big is non-finite exactly for non-finite x). */
__host__ __device__ __forceinline__ void cross_row_lay(const float *bgi, float *cro, int n) {
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    uint4 v = *reinterpret_cast<const uint4 *>(bgi + sw128(n, 4 * c));
    v.x = (v.x & 0x7f800000u) == 0x7f800000u ? 0u : v.x;
    v.y = (v.y & 0x7f800000u) == 0x7f800000u ? 0u : v.y;
    v.z = (v.z & 0x7f800000u) == 0x7f800000u ? 0u : v.z;
    v.w = (v.w & 0x7f800000u) == 0x7f800000u ? 0u : v.w;
    st4(cro + sw128(n, 4 * c), v);
  }
}
/* Consumer thread (rows r0, r0 + 8; tq) of an M-major A tile: its 16 A
 * values of one K-step in load_a's order: x[4*hi + j] row r0 and
 * x[8 + 4*hi + j] row r0 + 8, substep j, K index tq + 4*hi. The k of
 * substep j is 8j past substep 0's (PERM 1): 8 tile rows, the same
 * swizzle phase, so four base offsets and immediate steps of 256 floats. */
__host__ __device__ __forceinline__ void load_a_mn(const float *at, int r0, int tq,
                                                   float (&x)[16]) {
  int o[2][2];
#pragma unroll
  for (int rr = 0; rr < 2; ++rr)
#pragma unroll
    for (int hi = 0; hi < 2; ++hi) o[rr][hi] = mn_off(r0 + 8 * rr, frag_k<1>(0, tq, hi));
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int rr = 0; rr < 2; ++rr)
#pragma unroll
      for (int hi = 0; hi < 2; ++hi) x[8 * rr + 4 * hi + j] = at[o[rr][hi] + j * 8 * 32];
}
// END gs_3xtf32_layouts

/* Issue the TMA loads of K-step kt into stage s (one box per K-major
 * operand, four per MN-major one; the stage's byte count is the same). */
template <int LAY>
__device__ __forceinline__ void load_stage(Smem &sm, int s, int kt, int m0, int n0,
                                           const CUtensorMap *tmA, const CUtensorMap *tmB) {
  if constexpr (Lay<LAY>::A_MN) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int c0, c1, dst;
      mn_box(i, kt, m0, c0, c1, dst);
      tma_load_2d(sm.a[s] + dst, tmA, &sm.full[s], c0, c1);
    }
  } else {
    tma_load_2d(sm.a[s], tmA, &sm.full[s], kt * Cfg::BK, m0);
  }
  if constexpr (Lay<LAY>::B_NM) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int c0, c1, dst;
      mn_box(i, kt, n0, c0, c1, dst);
      tma_load_2d(sm.b[s] + dst, tmB, &sm.full[s], c0, c1);
    }
  } else {
    tma_load_2d(sm.b[s], tmB, &sm.full[s], kt * Cfg::BK, n0);
  }
}
static_assert(Cfg::BM == 4 * MN_BOX && Cfg::BN == 4 * MN_BOX && Cfg::BK == 32,
              "MN-major tiles are four 32 x 32 boxes");
static_assert(MN_BOX * 4 == 128, "an MN-major box row is one 128-byte swizzle span");
static_assert(GS_3XTF32_FAST && GS_3XTF32_CHUNK_STEPS == 1,
              "layouts NN/NT/TT need the fast split and chunks of one K-step");
/* Layouts in the GS_3XTF32_TMA_SPREAD mask (default NT): lane 0 of split
 * warp `part` (0..3) issues box `part` of each MN-major operand (a K-major
 * operand's one box: A by part 0, B by part 1) after an arrive.expect_tx
 * of just those bytes, so full[] counts four arrivals and no warp's split
 * waits behind all of a stage's issues (eight in NT, where both operands
 * are MN-major). TN always keeps thread 0 and one arrival. */
template <int LAY>
struct TmaSpread {
  static constexpr bool ON = ((GS_3XTF32_TMA_SPREAD >> LAY) & 1) && LAY != LAY_TN;
  static constexpr uint32_t ARRIVALS = ON ? 4 : 1;
};
template <int LAY>
__device__ __forceinline__ void load_stage_part(Smem &sm, int s, int kt, int m0, int n0,
                                                const CUtensorMap *tmA, const CUtensorMap *tmB,
                                                int part) {
  static_assert(Lay<LAY>::A_MN || Lay<LAY>::B_NM, "every part has a box to load");
  const uint32_t bytes = (Lay<LAY>::A_MN ? Cfg::A_BYTES / 4 : part == 0 ? Cfg::A_BYTES : 0) +
                         (Lay<LAY>::B_NM ? Cfg::B_BYTES / 4 : part == 1 ? Cfg::B_BYTES : 0);
  mbar_arrive_expect_tx(&sm.full[s], bytes);
  int c0, c1, dst;
  if constexpr (Lay<LAY>::A_MN) {
    mn_box(part, kt, m0, c0, c1, dst);
    tma_load_2d(sm.a[s] + dst, tmA, &sm.full[s], c0, c1);
  } else if (part == 0) {
    tma_load_2d(sm.a[s], tmA, &sm.full[s], kt * Cfg::BK, m0);
  }
  if constexpr (Lay<LAY>::B_NM) {
    mn_box(part, kt, n0, c0, c1, dst);
    tma_load_2d(sm.b[s] + dst, tmB, &sm.full[s], c0, c1);
  } else if (part == 1) {
    tma_load_2d(sm.b[s], tmB, &sm.full[s], kt * Cfg::BK, n0);
  }
}
#endif /* GS_3XTF32_LAYOUTS */

#if GS_3XTF32_LAYOUTS
template <int LAY>
__global__ void __launch_bounds__(Cfg::THREADS, 1)
    gemm_f32_3xtf32_kernel(const __grid_constant__ CUtensorMap tmA,
                           const __grid_constant__ CUtensorMap tmB, const Params p) {
#else
__global__ void __launch_bounds__(Cfg::THREADS, 1)
    gemm_f32_3xtf32_tn_kernel(const __grid_constant__ CUtensorMap tmA,
                              const __grid_constant__ CUtensorMap tmB, const Params p) {
#endif
  extern __shared__ unsigned char smem_raw[];
  /* Align the shared-space offset (not just the generic pointer) to 1024. */
  const uint32_t pad = (1024u - (smem_u32(smem_raw) & 1023u)) & 1023u;
  Smem &sm = *reinterpret_cast<Smem *>(smem_raw + pad);

  if (threadIdx.x == 0) {
#pragma unroll
#if GS_3XTF32_LAYOUTS
    for (int s = 0; s < Cfg::S; ++s) mbar_init(&sm.full[s], TmaSpread<LAY>::ARRIVALS);
#else
    for (int s = 0; s < Cfg::S; ++s) mbar_init(&sm.full[s], 1);
#endif
#pragma unroll
    for (int q = 0; q < Cfg::P; ++q) {
      mbar_init(&sm.pfull[q], Cfg::SPLIT_THREADS);
      mbar_init(&sm.pempty[q], Cfg::CONSUMER_WARPS);
    }
    fence_mbarrier_init();
    fence_proxy_async_smem();
    prefetch_tensormap(&tmA);
    prefetch_tensormap(&tmB);
  }
  __syncthreads();

  const int wg = warpgroup_index();
  if (wg == 0) {
    /* ---- split warpgroup: TMA issue (thread 0) and the B split (all) ---- */
    setmaxnreg_dec<Cfg::SPLIT_REGS>();
    int m0, n0;
    tile_origin(p, m0, n0);
    const int KT = p.k / Cfg::BK; /* K-steps */
    const int n = (int)tid_x(); /* the B row this thread splits */
    const int sw = n & 7;      /* its 128-byte swizzle phase */
#if GS_3XTF32_LAYOUTS
    if constexpr (TmaSpread<LAY>::ON) {
      if ((n & 31) == 0) load_stage_part<LAY>(sm, 0, 0, m0, n0, &tmA, &tmB, n >> 5);
    } else if (n == 0) {
      mbar_arrive_expect_tx(&sm.full[0], Cfg::STAGE_TX);
      load_stage<LAY>(sm, 0, 0, m0, n0, &tmA, &tmB);
    }
#else
    if (n == 0) {
      mbar_arrive_expect_tx(&sm.full[0], Cfg::STAGE_TX);
      tma_load_2d(sm.a[0], &tmA, &sm.full[0], 0, m0);
      tma_load_2d(sm.b[0], &tmB, &sm.full[0], 0, n0);
    }
#endif
#pragma unroll 1
    for (int t = 0; t < KT; ++t) {
      const int s = t % Cfg::S, q = t % Cfg::P;
      /* Part set q was last used by step t - P; its release also frees TMA
       * slot (t + 1) % S (S == P + 1), whose last step was t - P too. */
      mbar_wait(&sm.pempty[q], ((t / Cfg::P) & 1u) ^ 1u, TAG_PEMPTY);
#if GS_3XTF32_LAYOUTS
      if constexpr (TmaSpread<LAY>::ON) {
        if ((n & 31) == 0 && t + 1 < KT)
          load_stage_part<LAY>(sm, (t + 1) % Cfg::S, t + 1, m0, n0, &tmA, &tmB, n >> 5);
      } else if (n == 0 && t + 1 < KT) {
        const int s1 = (t + 1) % Cfg::S;
        mbar_arrive_expect_tx(&sm.full[s1], Cfg::STAGE_TX);
        load_stage<LAY>(sm, s1, t + 1, m0, n0, &tmA, &tmB);
      }
#else
      if (n == 0 && t + 1 < KT) {
        const int s1 = (t + 1) % Cfg::S;
        mbar_arrive_expect_tx(&sm.full[s1], Cfg::STAGE_TX);
        tma_load_2d(sm.a[s1], &tmA, &sm.full[s1], (t + 1) * Cfg::BK, m0);
        tma_load_2d(sm.b[s1], &tmB, &sm.full[s1], (t + 1) * Cfg::BK, n0);
      }
#endif
      mbar_wait(&sm.full[s], (t / Cfg::S) & 1u, TAG_FULL_SPLIT);

#if GS_3XTF32_LAYOUTS
      if constexpr (LAY != LAY_TN) {
        /* Not in place: big -> bc[q], small -> bs[q]; after the reduction
         * (every split thread has read the raw tile) cross over b[s] when
         * the tile has a non-tame value. */
        uint32_t wild;
        if constexpr (Lay<LAY>::SPLIT_NM)
          wild = split_nm<Lay<LAY>::PERM>(sm.b[s], sm.bc[q], sm.bs[q], n);
        else
          wild = split_row_lay<LAY>(sm.b[s], sm.bc[q], sm.bs[q], n);
        wild = bar_red_or(4, Cfg::SPLIT_THREADS, wild);
        if (wild) cross_row_lay(sm.bc[q], sm.b[s], n);
        if (n == 0) sm.pwild[q] = wild;
      } else {
#endif
#if GS_3XTF32_FAST
      float *brow = sm.b[s] + n * Cfg::BK; /* raw in, big out (in place) */
      float *srow = sm.bs[q] + n * Cfg::BK;
      float *crow = sm.bc[q] + n * Cfg::BK;
      uint32_t wild = 0; /* this row has a value that is not tame */
#if GS_3XTF32_SPEC
      /* Speculative: split every value with split_fast and store, while a
       * tree of max.NaN decides (off the critical path) whether the half-row
       * was tame; if not (rare), split it again exactly (split_words) and
       * overwrite the same addresses (same thread: program order). */
#pragma unroll 1
      for (int h = 0; h < 2; ++h) {
        float4 r[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) r[e] = ld_shared_f4(brow + (((2 * e + h) ^ sw) << 2));
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          uint4 vb, vs;
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const Words w = split_fast(f4_at(r[e], j));
            u4_set(vb, e, w.big);
            u4_set(vs, e, w.small);
          }
          const int off = ((2 * j + h) ^ sw) << 2;
          st_shared_u4(brow + off, vb);
          st_shared_u4(srow + off, vs);
        }
        float m4[4];
#pragma unroll
        for (int e = 0; e < 4; ++e)
          m4[e] = max_abs_nan(max_abs_nan(fabsf(r[e].x), r[e].y),
                              max_abs_nan(fabsf(r[e].z), r[e].w));
        if (!tame(max_abs_nan(max_abs_nan(m4[0], m4[1]), max_abs_nan(m4[2], m4[3])))) {
          wild = 1;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            uint4 vb, vs;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const Words w = split_words(f4_at(r[e], j));
              u4_set(vb, e, w.big);
              u4_set(vs, e, w.small);
            }
            const int off = ((2 * j + h) ^ sw) << 2;
            st_shared_u4(brow + off, vb);
            st_shared_u4(srow + off, vs);
          }
        }
      }
#else
#pragma unroll 1
      for (int h = 0; h < 2; ++h) {
        /* The same chunk permutation as below (#else). */
        float4 r[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) r[e] = ld_shared_f4(brow + (((2 * e + h) ^ sw) << 2));
        float mx = 0.f;
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int j = 0; j < 4; ++j) mx = max_abs_nan(mx, f4_at(r[e], j));
        if (tame(mx)) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            uint4 vb, vs;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const Words w = split_fast(f4_at(r[e], j));
              u4_set(vb, e, w.big);
              u4_set(vs, e, w.small);
            }
            const int off = ((2 * j + h) ^ sw) << 2;
            st_shared_u4(brow + off, vb);
            st_shared_u4(srow + off, vs);
          }
        } else {
          wild = 1;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            uint4 vb, vs;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const Words w = split_words(f4_at(r[e], j));
              u4_set(vb, e, w.big);
              u4_set(vs, e, w.small);
            }
            const int off = ((2 * j + h) ^ sw) << 2;
            st_shared_u4(brow + off, vb);
            st_shared_u4(srow + off, vs);
          }
        }
      }
#endif
      /* Cross B equals big B unless some value of the tile is non-finite:
       * the consumers then read big B in its place, and the cross tile is
       * written only for a tile with a value that is not tame (rare), from
       * big (cross = big where finite, 0 where Inf/NaN: big is non-finite
       * exactly for non-finite x). */
      wild = bar_red_or(4, Cfg::SPLIT_THREADS, wild);
      if (wild) {
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          uint4 v = *reinterpret_cast<const uint4 *>(brow + 4 * c);
          v.x = (v.x & 0x7f800000u) == 0x7f800000u ? 0u : v.x;
          v.y = (v.y & 0x7f800000u) == 0x7f800000u ? 0u : v.y;
          v.z = (v.z & 0x7f800000u) == 0x7f800000u ? 0u : v.z;
          v.w = (v.w & 0x7f800000u) == 0x7f800000u ? 0u : v.w;
          st_shared_u4(crow + 4 * c, v);
        }
      }
      if (n == 0) sm.pwild[q] = wild;
#else
      float *brow = sm.b[s] + n * Cfg::BK; /* raw in, big out (in place) */
      float *srow = sm.bs[q] + n * Cfg::BK;
      float *crow = sm.bc[q] + n * Cfg::BK;
#pragma unroll 1
      for (int h = 0; h < 2; ++h) {
        /* Raw chunks 2e + h (e = 0..3) of this row hold k = 8e + 4h + j;
         * stored chunk 2j + h, element e, takes raw k = 8e + 4h + j: the K
         * index 4h + e of wgmma substep j (see the K permutation above).
         * Each thread reads and writes the same four 16-byte chunks. */
        float4 r[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) r[e] = ld_shared_f4(brow + (((2 * e + h) ^ sw) << 2));
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          uint4 vb, vs, vc;
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const Words w = split_words(f4_at(r[e], j));
            u4_set(vb, e, w.big);
            u4_set(vs, e, w.small);
            u4_set(vc, e, w.cross);
          }
          const int off = ((2 * j + h) ^ sw) << 2;
          st_shared_u4(brow + off, vb);
          st_shared_u4(srow + off, vs);
          st_shared_u4(crow + off, vc);
        }
      }
#endif
#if GS_3XTF32_LAYOUTS
      }
#endif
      /* Generic-proxy writes, read next by wgmma (async proxy). */
      fence_proxy_async_smem();
      mbar_arrive(&sm.pfull[q]);
    }
    return;
  }

  /* ---- consumer warpgroups ---- */
  setmaxnreg_inc<Cfg::CONSUMER_REGS>();
  int m0, n0;
  tile_origin(p, m0, n0);
  const int KT = p.k / Cfg::BK; /* K-steps */
  const int tid = (int)tid_x();
  const int cw = (tid >> 7) - 1; /* which 64 rows of the block tile */
  const int t = tid & 127;       /* thread in the warpgroup */
  const int warp = t >> 5, lane = t & 31;
  const int g = lane >> 2, tq = lane & 3;
  /* A fragment rows r0 = cw*64 + warp*16 + g and r0 + 8 (both have
   * swizzle phase g); raw chunks 2tq and 2tq + 1 hold k = 8tq .. 8tq + 7. */
  const int r0 = cw * Cfg::WG_M + warp * 16 + g;
  const int oa0 = r0 * Cfg::BK + (((2 * tq) ^ g) << 2);
  const int oa1 = r0 * Cfg::BK + (((2 * tq + 1) ^ g) << 2);
  const int ob0 = oa0 + 8 * Cfg::BK, ob1 = oa1 + 8 * Cfg::BK;

  float acc[Cfg::ACC], chk[Cfg::ACC];
#pragma unroll
  for (int i = 0; i < Cfg::ACC; ++i) {
    acc[i] = 0.f;
    chk[i] = 0.f;
  }

#if GS_3XTF32_V2
  /* One K-step is one chunk. Per step: split all 16 A values (12 words x 4
   * substeps), wait for B's parts, then (GS_3XTF32_PINGPONG) take the
   * issue turn, issue the step's 12 wgmmas in one group, hand the turn to
   * the other consumer, load the next step's A, drain, release, add.
   * Order inside the step (GS_3XTF32_ORDER 1): the 8 correction products
   * first, while the chunk accumulator is small (the tensor cores' own
   * truncation then costs ~2^-11 of the result each), the 4 big*big last:
   * 4 full-size accumulations per chunk instead of ~11. */
  static_assert(Cfg::CHUNK_STEPS == 1, "GS_3XTF32_V2: one K-step per chunk");
  static_assert(GS_3XTF32_FAST, "GS_3XTF32_V2 builds on GS_3XTF32_FAST");
  float x[16];
  auto load_a = [&](int st) {
#if GS_3XTF32_LAYOUTS
    if constexpr (Lay<LAY>::A_MN) {
      load_a_mn(sm.a[st], r0, tq, x);
      return;
    }
#endif
    const float *at = sm.a[st];
    const float4 v0 = ld_shared_f4(at + oa0), v1 = ld_shared_f4(at + oa1);
    const float4 v2 = ld_shared_f4(at + ob0), v3 = ld_shared_f4(at + ob1);
    x[0] = v0.x; x[1] = v0.y; x[2] = v0.z; x[3] = v0.w;
    x[4] = v1.x; x[5] = v1.y; x[6] = v1.z; x[7] = v1.w;
    x[8] = v2.x; x[9] = v2.y; x[10] = v2.z; x[11] = v2.w;
    x[12] = v3.x; x[13] = v3.y; x[14] = v3.z; x[15] = v3.w;
  };
  /* All 16 values of every thread of this consumer warpgroup tame: the
   * whole warpgroup takes the fast path. Decided per warpgroup (barrier
   * 7 + cw, a reduction over its 128 threads), not per warp, because the
   * two paths hold different wgmma instructions and every wgmma must be
   * executed by the whole warpgroup (.sync.aligned). A tree of max.NaN
   * (4 chains) keeps the latency short. */
  auto all_tame = [&]() {
    float m0_ = 0.f, m1_ = 0.f, m2_ = 0.f, m3_ = 0.f;
#pragma unroll
    for (int i = 0; i < 16; i += 4) {
      m0_ = max_abs_nan(m0_, x[i]);
      m1_ = max_abs_nan(m1_, x[i + 1]);
      m2_ = max_abs_nan(m2_, x[i + 2]);
      m3_ = max_abs_nan(m3_, x[i + 3]);
    }
    const float mx = max_abs_nan(max_abs_nan(m0_, m1_), max_abs_nan(m2_, m3_));
    return bar_red_or(7 + cw, 128, !tame(mx)) == 0;
  };
#if GS_3XTF32_PINGPONG
  /* Issue turns: consumer c takes its turn at barrier 5 + c (its own
   * threads sync, the other consumer's arrive); consumer 1 owes consumer 0
   * the first turn. Consumer 1 skips its last hand-over (nobody takes it). */
  if (cw == 1) named_barrier_arrive(5, 256);
#endif
  int s = 0, q = 0;
  uint32_t s_ph = 0, q_ph = 0;
  mbar_wait(&sm.full[0], 0, TAG_FULL_CONS);
  load_a(0);
  bool fast = all_tame();
  auto step = [&](auto fast_tag, int kt) {
    constexpr bool FAST = decltype(fast_tag)::value;
    /* wgmma A fragment of substep j: a0 (g, tq), a1 (g+8, tq), a2 (g, tq+4),
     * a3 (g+8, tq+4) in the substep's K order: raw k 8tq + j (a0, a1) and
     * 8tq + 4 + j (a2, a3). */
    uint32_t a_big[4][4], a_sml[4][4], a_crs[4][4];
    /* All 12 words of substep j exist before its wgmma_fence (else the
     * compiler sinks some between the wgmmas and ptxas injects fences). */
    auto split_sub = [&](int j) {
      const float v[4] = {x[j], x[8 + j], x[4 + j], x[12 + j]};
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const Words w = FAST ? split_fast(v[r]) : split_words(v[r]);
        a_big[j][r] = w.big;
        a_sml[j][r] = w.small;
        a_crs[j][r] = FAST ? w.big : w.cross;
      }
      reg_pin4u(a_big[j]);
      reg_pin4u(a_sml[j]);
      if (!FAST) reg_pin4u(a_crs[j]);
    };
#if !GS_3XTF32_INTERLEAVE
#pragma unroll
    for (int j = 0; j < 4; ++j) split_sub(j);
#endif
    mbar_wait(&sm.pfull[q], q_ph, TAG_PFULL);
#if GS_3XTF32_LAYOUTS
    /* TN: big in place over the raw tile, cross in the part set; the other
     * layouts: big in the part set, cross over the raw tile. */
    const uint64_t d_big = smem_desc_sw128_kmajor(LAY == LAY_TN ? sm.b[s] : sm.bc[q]);
    const uint64_t d_sml = smem_desc_sw128_kmajor(sm.bs[q]);
    const uint64_t d_crs =
        sm.pwild[q] ? smem_desc_sw128_kmajor(LAY == LAY_TN ? sm.bc[q] : sm.b[s]) : d_big;
#else
    const uint64_t d_big = smem_desc_sw128_kmajor(sm.b[s]);
    const uint64_t d_sml = smem_desc_sw128_kmajor(sm.bs[q]);
    /* No Inf/NaN in this B tile: cross B is big B, not written. */
    const uint64_t d_crs = sm.pwild[q] ? smem_desc_sw128_kmajor(sm.bc[q]) : d_big;
#endif
#if GS_3XTF32_PINGPONG
    named_barrier_sync(5 + cw, 256);
#endif
#if GS_3XTF32_ORDER
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#if GS_3XTF32_INTERLEAVE
      split_sub(j);
      wgmma_fence();
#else
      if (j == 0) wgmma_fence();
#endif
      wgmma_m64n128k8_tf32_rs(chk, FAST ? a_big[j] : a_crs[j], smem_desc_advance(d_sml, 32 * j),
                              j == 0 ? 0 : 1);
      wgmma_m64n128k8_tf32_rs(chk, a_sml[j], smem_desc_advance(d_crs, 32 * j), 1);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
      wgmma_m64n128k8_tf32_rs(chk, a_big[j], smem_desc_advance(d_big, 32 * j), 1);
#else
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#if GS_3XTF32_INTERLEAVE
      split_sub(j);
      wgmma_fence();
#else
      if (j == 0) wgmma_fence();
#endif
      wgmma_m64n128k8_tf32_rs(chk, FAST ? a_big[j] : a_crs[j], smem_desc_advance(d_sml, 32 * j),
                              j == 0 ? 0 : 1);
      wgmma_m64n128k8_tf32_rs(chk, a_sml[j], smem_desc_advance(d_crs, 32 * j), 1);
      wgmma_m64n128k8_tf32_rs(chk, a_big[j], smem_desc_advance(d_big, 32 * j), 1);
    }
#endif
    wgmma_commit();
#if GS_3XTF32_PINGPONG
    if (cw == 0 || kt + 1 < KT) named_barrier_arrive(6 - cw, 256);
#endif
    const int q_used = q;
    if (++s == Cfg::S) {
      s = 0;
      s_ph ^= 1u;
    }
    if (++q == Cfg::P) {
      q = 0;
      q_ph ^= 1u;
    }
    /* The next step's A while this step's wgmmas run. */
    if (kt + 1 < KT) {
      mbar_wait(&sm.full[s], s_ph, TAG_FULL_CONS);
      load_a(s);
      fast = all_tame();
    }
    /* Drain, release this step's part set (and TMA stage), add the chunk to
     * the main accumulator (FP32, round to nearest). */
    wgmma_wait<0>();
    wgmma_reg_fence(chk);
    if (lane == 0) mbar_arrive(&sm.pempty[q_used]);
#pragma unroll
    for (int i = 0; i < Cfg::ACC; ++i) acc[i] += chk[i];
  };
#pragma unroll 1
  for (int kt = 0; kt < KT; ++kt) {
    if (fast)
      step(std::true_type{}, kt);
    else
      step(std::false_type{}, kt);
  }
#else
  /* Outer loop over K-chunks, inner (unrolled) over the chunk's K-steps:
   * the loop's back edge always follows a chunk drain (wgmma_wait<0>), so
   * no wgmma is in flight across it. */
  const int n_chunks = (KT + Cfg::CHUNK_STEPS - 1) / Cfg::CHUNK_STEPS;
  int s = 0, q = 0, prev_q = 0;   /* ring slots of this step and the last one */
  uint32_t s_ph = 0, q_ph = 0;    /* their barrier phases */
#pragma unroll 1
  for (int ch = 0; ch < n_chunks; ++ch) {
#pragma unroll
    for (int cs = 0; cs < Cfg::CHUNK_STEPS; ++cs) {
      if (cs > 0 && ch * Cfg::CHUNK_STEPS + cs >= KT) break; /* last, shorter chunk */

      mbar_wait(&sm.full[s], s_ph, TAG_FULL_CONS);
      /* x[0..3]: row r0, k = 8tq + j; x[4..7]: row r0, k = 8tq + 4 + j;
       * x[8..11], x[12..15]: the same for row r0 + 8. */
      float x[16];
#if GS_3XTF32_LAYOUTS
      if constexpr (Lay<LAY>::A_MN)
        load_a_mn(sm.a[s], r0, tq, x);
      else
#endif
      {
        const float *at = sm.a[s];
        const float4 v0 = ld_shared_f4(at + oa0), v1 = ld_shared_f4(at + oa1);
        const float4 v2 = ld_shared_f4(at + ob0), v3 = ld_shared_f4(at + ob1);
        x[0] = v0.x; x[1] = v0.y; x[2] = v0.z; x[3] = v0.w;
        x[4] = v1.x; x[5] = v1.y; x[6] = v1.z; x[7] = v1.w;
        x[8] = v2.x; x[9] = v2.y; x[10] = v2.z; x[11] = v2.w;
        x[12] = v3.x; x[13] = v3.y; x[14] = v3.z; x[15] = v3.w;
      }
#if GS_3XTF32_FAST
      /* The whole warp takes the fast split when all its A values of this
       * step are tame (warp-uniform: no divergence inside the substeps). */
#if GS_3XTF32_LAYOUTS
      constexpr int lay_bit = LAY;
#else
      constexpr int lay_bit = 0; /* TN */
#endif
      float mx = 0.f;
      if constexpr ((GS_3XTF32_CONSUMER_TREE >> lay_bit) & 1) {
        float m4[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
          m4[i] = max_abs4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
        mx = max_abs4(m4[0], m4[1], m4[2], m4[3]);
      } else {
#pragma unroll
        for (int i = 0; i < 16; ++i) mx = max_abs_nan(mx, x[i]);
      }
      const bool fast = __all_sync(0xffffffffu, tame(mx));
#endif
      mbar_wait(&sm.pfull[q], q_ph, TAG_PFULL);
#if GS_3XTF32_LAYOUTS
      /* As in the V2 loop (same expressions, kept inline: a helper
       * returning the three changed the generated code). */
      const uint64_t d_big = smem_desc_sw128_kmajor(LAY == LAY_TN ? sm.b[s] : sm.bc[q]);
      const uint64_t d_sml = smem_desc_sw128_kmajor(sm.bs[q]);
      const uint64_t d_crs =
          sm.pwild[q] ? smem_desc_sw128_kmajor(LAY == LAY_TN ? sm.bc[q] : sm.b[s]) : d_big;
#else
      const uint64_t d_big = smem_desc_sw128_kmajor(sm.b[s]);
      const uint64_t d_sml = smem_desc_sw128_kmajor(sm.bs[q]);
#if GS_3XTF32_FAST
      /* No Inf/NaN in this B tile: cross B is big B, not written. */
      const uint64_t d_crs = sm.pwild[q] ? smem_desc_sw128_kmajor(sm.bc[q]) : d_big;
#else
      const uint64_t d_crs = smem_desc_sw128_kmajor(sm.bc[q]);
#endif
#endif /* GS_3XTF32_LAYOUTS */

#if GS_3XTF32_DEFER_BIG
      uint32_t big_keep[Cfg::KSUB][4];
#endif
#pragma unroll
      for (int j = 0; j < Cfg::KSUB; ++j) {
        /* Bound the A-part registers in flight: at most INFLIGHT (2) groups
         * stay pending, so at most INFLIGHT + 1 register sets (12 words
         * each) are live; the group of substep j one step back is older
         * than those and has retired (ptxas keeps in-flight A registers
         * allocated until their group retires: no reuse hazard). */
        wgmma_wait<Cfg::INFLIGHT>();
        /* At the last substep that wait also completed the previous step
         * (INFLIGHT < KSUB);
         * inside a chunk nothing else released it: release its part set
         * (and so its TMA stage) now. */
        if (j == Cfg::KSUB - 1 && cs > 0 && lane == 0)
          mbar_arrive(&sm.pempty[prev_q]);
        reg_pin4(x[j], x[4 + j], x[8 + j], x[12 + j]);
        /* wgmma A fragment of substep j: a0 (g, tq), a1 (g+8, tq), a2 (g, tq+4),
         * a3 (g+8, tq+4) in the substep's K order, i.e. raw k 8tq + j (a0,
         * a1) and 8tq + 4 + j (a2, a3). */
#if GS_3XTF32_FAST
        Words w0, w1, w2, w3;
        if (fast) {
          w0 = split_fast(x[j]);
          w1 = split_fast(x[8 + j]);
          w2 = split_fast(x[4 + j]);
          w3 = split_fast(x[12 + j]);
        } else {
          w0 = split_words(x[j]);
          w1 = split_words(x[8 + j]);
          w2 = split_words(x[4 + j]);
          w3 = split_words(x[12 + j]);
        }
#else
        const Words w0 = split_words(x[j]), w1 = split_words(x[8 + j]);
        const Words w2 = split_words(x[4 + j]), w3 = split_words(x[12 + j]);
#endif
        uint32_t a_big[4] = {w0.big, w1.big, w2.big, w3.big};
        uint32_t a_sml[4] = {w0.small, w1.small, w2.small, w3.small};
        uint32_t a_crs[4] = {w0.cross, w1.cross, w2.cross, w3.cross};
        /* All 12 words exist before the fence (else the compiler sinks some
         * of them between the wgmmas and ptxas must inject more fences). */
        reg_pin4u(a_big);
        reg_pin4u(a_sml);
        reg_pin4u(a_crs);
        wgmma_fence();
        /* cross_a x small_b, small_a x cross_b, big_a x big_b; the chunk's
         * first wgmma overwrites the chunk accumulator (scale-d 0). */
        wgmma_m64n128k8_tf32_rs(chk, a_crs, smem_desc_advance(d_sml, 32 * j),
                                (cs == 0 && j == 0) ? 0 : 1);
        wgmma_m64n128k8_tf32_rs(chk, a_sml, smem_desc_advance(d_crs, 32 * j), 1);
#if GS_3XTF32_SMALL_SMALL
        /* the fourth product (see GS_3XTF32_SMALL_SMALL) */
        wgmma_m64n128k8_tf32_rs(chk, a_sml, smem_desc_advance(d_sml, 32 * j), 1);
#endif
#if GS_3XTF32_DEFER_BIG
        /* big_a x big_b of every substep after all the corrections (see
         * GS_3XTF32_DEFER_BIG): keep the big words until then. */
#pragma unroll
        for (int r = 0; r < 4; ++r) big_keep[j][r] = a_big[r];
        wgmma_commit();
      }
#if GS_3XTF32_SPLIT_SUMS
      /* The corrections' sum goes to the main accumulator first; big*big
       * then starts from zero: the tensor cores never add the two (their
       * accumulation truncates the smaller addend's low bits). */
      wgmma_wait<0>();
      wgmma_reg_fence(chk);
#pragma unroll
      for (int i = 0; i < Cfg::ACC; ++i) acc[i] += chk[i];
      wgmma_fence(); /* chk was just read by other instructions */
#pragma unroll
      for (int j = 0; j < Cfg::KSUB; ++j)
        wgmma_m64n128k8_tf32_rs(chk, big_keep[j], smem_desc_advance(d_big, 32 * j), j == 0 ? 0 : 1);
#else
#pragma unroll
      for (int j = 0; j < Cfg::KSUB; ++j)
        wgmma_m64n128k8_tf32_rs(chk, big_keep[j], smem_desc_advance(d_big, 32 * j), 1);
#endif
      wgmma_commit();
#else
        wgmma_m64n128k8_tf32_rs(chk, a_big, smem_desc_advance(d_big, 32 * j), 1);
        wgmma_commit();
      }
#endif
      prev_q = q;
      if (++s == Cfg::S) {
        s = 0;
        s_ph ^= 1u;
      }
      if (++q == Cfg::P) {
        q = 0;
        q_ph ^= 1u;
      }
    }
    /* Chunk end: drain, release the last step's part set (and TMA stage),
     * add the chunk to the main accumulator (FP32, round to nearest). */
    wgmma_wait<0>();
    wgmma_reg_fence(chk);
    if (lane == 0) mbar_arrive(&sm.pempty[prev_q]);
#pragma unroll
    for (int i = 0; i < Cfg::ACC; ++i) acc[i] += chk[i];
  }

#endif

  /* ---- epilogue ---- */
  /* Both consumers are past their last wgmma (the last step ends a chunk:
   * waited), every TMA load issued was waited for, and the split group's
   * last writes were consumed: the TMA ring may be overwritten. */
  named_barrier_sync(1, 128 * Cfg::CONSUMERS);
  float *epi = reinterpret_cast<float *>(&sm) + (size_t)cw * Cfg::BN * Cfg::EPI_LD;
  {
    /* wgmma D fragment: value v of warp w, lane l is row w*16 + l/4 + 8*((v/2)%2),
     * column (v/4)*8 + (l%4)*2 + v%2. Stored column-major, pitch EPI_LD. */
    const int rr = warp * 16 + g;
    const int c0 = tq * 2;
#pragma unroll
    for (int v = 0; v < Cfg::ACC; ++v) {
      const int row = rr + 8 * ((v >> 1) & 1);
      const int col = (v >> 2) * 8 + c0 + (v & 1);
      epi[col * Cfg::EPI_LD + row] = acc[v];
    }
  }
  named_barrier_sync(2 + cw, 128);

  const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
  const float beta = p.beta_dev ? *p.beta_dev : p.beta;
  constexpr int RUNS = Cfg::WG_M / 4;       /* runs of 4 rows per column: 16 */
  constexpr int COLS_PER_PASS = 128 / RUNS; /* 8 */
  const int run = t % RUNS;
  const int64_t row_g = (int64_t)m0 + cw * Cfg::WG_M + run * 4;
  float4 bias4 = make_float4(0.f, 0.f, 0.f, 0.f);
  if (p.bias) bias4 = *reinterpret_cast<const float4 *>(p.bias + row_g);
#pragma unroll 4
  for (int pass = 0; pass < Cfg::BN / COLS_PER_PASS; ++pass) {
    const int col = pass * COLS_PER_PASS + t / RUNS;
    const float4 a4 = ld_shared_f4(epi + col * Cfg::EPI_LD + run * 4);
    float4 v = make_float4(alpha * a4.x, alpha * a4.y, alpha * a4.z, alpha * a4.w);
    const int64_t col_g = (int64_t)n0 + col;
    if (beta != 0.f) {
      const float4 c = *reinterpret_cast<const float4 *>(p.C + col_g * p.ldc + row_g);
      v.x = fmaf(beta, c.x, v.x);
      v.y = fmaf(beta, c.y, v.y);
      v.z = fmaf(beta, c.z, v.z);
      v.w = fmaf(beta, c.w, v.w);
    }
    v.x += bias4.x;
    v.y += bias4.y;
    v.z += bias4.z;
    v.w += bias4.w;
    *reinterpret_cast<float4 *>(p.D + col_g * p.ldd + row_g) = v;
  }
}

/* ------------------------------------------------------------------ host */

/* aligned16() and get_encode(): kernels/sm90_host.h */

/* A K-major FP32 operand: `rows` rows of `k` elements, `ld` elements apart,
 * loaded as (BK x box_rows) boxes with the 128-byte swizzle (a box row of
 * 32 floats is exactly one swizzle span). */
static int encode_kmajor(PFN_cuTensorMapEncodeTiled_v12000 enc, CUtensorMap *map, const void *ptr,
                         int64_t k, int64_t rows, int64_t ld, uint32_t box_rows) {
  const cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows};
  const cuuint64_t strides[1] = {(cuuint64_t)ld * sizeof(float)};
  const cuuint32_t box[2] = {(cuuint32_t)Cfg::BK, box_rows};
  const cuuint32_t estrides[2] = {1, 1};
  const CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<void *>(ptr), dims,
                         strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

#if GS_3XTF32_LAYOUTS
/* An MN-major FP32 operand (A stored m x k, B stored n x k): `rows`
 * contiguous elements (m or n) per stored column, k columns `ld` elements
 * apart, loaded as (32 x 32) boxes with the 128-byte swizzle (a box row of
 * 32 floats is one swizzle span), four per block tile (mn_box). */
static int encode_mnmajor(PFN_cuTensorMapEncodeTiled_v12000 enc, CUtensorMap *map,
                          const void *ptr, int64_t rows, int64_t k, int64_t ld) {
  const cuuint64_t dims[2] = {(cuuint64_t)rows, (cuuint64_t)k};
  const cuuint64_t strides[1] = {(cuuint64_t)ld * sizeof(float)};
  const cuuint32_t box[2] = {(cuuint32_t)MN_BOX, (cuuint32_t)Cfg::BK};
  const cuuint32_t estrides[2] = {1, 1};
  const CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<void *>(ptr), dims,
                         strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}
#endif

/* cudaFuncSetAttribute once per context: the context each device's
 * attributes were last set in (0: none yet). Not a stream operation, so
 * safe while a stream captures. */
static constexpr int kMaxDevices = 64;
static std::atomic<uint64_t> attr_ctx[kMaxDevices];

static cudaError_t set_smem_attr(void (*kernel)(CUtensorMap, CUtensorMap, Params)) {
  const cudaError_t e =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kSmemBytes);
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e;
}

static cudaError_t ensure_attributes(int dev, uint64_t ctx_id) {
  const bool cacheable = ctx_id != 0 && dev >= 0 && dev < kMaxDevices;
  if (cacheable && attr_ctx[dev].load(std::memory_order_acquire) == ctx_id) return cudaSuccess;
#if GS_3XTF32_LAYOUTS
  void (*const kernels[4])(CUtensorMap, CUtensorMap, Params) = {
      gemm_f32_3xtf32_kernel<LAY_TN>, gemm_f32_3xtf32_kernel<LAY_NN>,
      gemm_f32_3xtf32_kernel<LAY_NT>, gemm_f32_3xtf32_kernel<LAY_TT>};
  for (int i = 0; i < 4; ++i) {
    const cudaError_t e = set_smem_attr(kernels[i]);
    if (e != cudaSuccess) return e;
  }
#else
  const cudaError_t e = set_smem_attr(gemm_f32_3xtf32_tn_kernel);
  if (e != cudaSuccess) return e;
#endif
  if (cacheable) attr_ctx[dev].store(ctx_id, std::memory_order_release);
  return cudaSuccess;
}

}  // namespace gs_f32_3xtf32

using namespace gs_f32_3xtf32;

extern "C" int gs_gemm_f32_3xtf32_preload(void) {
#if GS_3XTF32_LAYOUTS
  void (*const kernels[4])(CUtensorMap, CUtensorMap, Params) = {
      gemm_f32_3xtf32_kernel<LAY_TN>, gemm_f32_3xtf32_kernel<LAY_NN>,
      gemm_f32_3xtf32_kernel<LAY_NT>, gemm_f32_3xtf32_kernel<LAY_TT>};
#else
  void (*const kernels[1])(CUtensorMap, CUtensorMap, Params) = {gemm_f32_3xtf32_tn_kernel};
#endif
  for (auto k : kernels) {
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, k) != cudaSuccess) {
      (void)cudaGetLastError();
      return -1;
    }
  }
  return 0;
}

extern "C" int gs_gemm_f32_3xtf32_supports(int64_t m, int64_t n, int64_t k, int trans_a,
                                           int trans_b, const void *A, int64_t lda,
                                           const void *B, int64_t ldb, const void *C,
                                           int64_t ldc, int check_c) {
  const int64_t lim = (int64_t)1 << 31;
  const int64_t ldal = GS_GEMM_F32_3XTF32_ALIGN_LD;
  if (m <= 0 || n <= 0 || k <= 0 || m >= lim || n >= lim || k >= lim) return 0;
  if (m % GS_GEMM_F32_3XTF32_ALIGN_M || n % GS_GEMM_F32_3XTF32_ALIGN_N ||
      k % GS_GEMM_F32_3XTF32_ALIGN_K)
    return 0;
#if GS_3XTF32_LAYOUTS
  /* TN, NN, NT, TT: A stored k x m (trans_a 1) or m x k (0), B stored
   * k x n (trans_b 0) or n x k (1); the stored rows bound the leading dims. */
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1)) return 0;
  if ((m / Cfg::BM) * (n / Cfg::BN) >= lim) return 0; /* 1-D grid */
  if (!A || !B || !aligned16(A) || !aligned16(B)) return 0;
  if (lda % ldal || ldb % ldal || lda < (trans_a ? k : m) || ldb < (trans_b ? n : k)) return 0;
#else
  if (trans_a != 1 || trans_b != 0) return 0; /* TN only */
  if ((m / Cfg::BM) * (n / Cfg::BN) >= lim) return 0; /* 1-D grid */
  if (!A || !B || !aligned16(A) || !aligned16(B)) return 0;
  if (lda % ldal || ldb % ldal || lda < k || ldb < k) return 0;
#endif
  if (lda >= ((int64_t)1 << 38) || ldb >= ((int64_t)1 << 38)) return 0; /* TMA stride < 2^40 B */
  if (check_c) {
    if (!C || !aligned16(C) || ldc % ldal || ldc < m) return 0;
  }
  return 1;
}

extern "C" gs_kstatus gs_gemm_f32_3xtf32_launch(const gs_kernel_args *a) {
  if (!a) return GS_K_UNSUPPORTED;
  const int check_c = a->scalars_on_device ? 1 : (a->beta != 0.f);
  if (!gs_gemm_f32_3xtf32_supports(a->m, a->n, a->k, a->trans_a, a->trans_b, a->A, a->lda, a->B,
                                   a->ldb, a->C, a->ldc, check_c))
    return GS_K_UNSUPPORTED;
  if (!a->D || !aligned16(a->D) || a->ldd % GS_GEMM_F32_3XTF32_ALIGN_LD || a->ldd < a->m)
    return GS_K_UNSUPPORTED;
  if (a->bias && !aligned16(a->bias)) return GS_K_UNSUPPORTED;
  if (a->scalars_on_device && (!a->alpha_dev || !a->beta_dev)) return GS_K_UNSUPPORTED;
  /* D may alias C only exactly (same start, same ld). */
  if (check_c && a->C == a->D && a->ldc != a->ldd) return GS_K_UNSUPPORTED;

  PFN_cuTensorMapEncodeTiled_v12000 enc = get_encode();
  if (!enc) return GS_K_LAUNCH_FAILED;
  CUtensorMap tmA, tmB;
#if GS_3XTF32_LAYOUTS
  /* supports() checked: trans_a, trans_b are 0 or 1 */
  const int lay = a->trans_a ? (a->trans_b ? LAY_TT : LAY_TN) : (a->trans_b ? LAY_NT : LAY_NN);
  if (!(a->trans_a ? encode_kmajor(enc, &tmA, a->A, a->k, a->m, a->lda, Cfg::BM)
                   : encode_mnmajor(enc, &tmA, a->A, a->m, a->k, a->lda)) ||
      !(a->trans_b ? encode_mnmajor(enc, &tmB, a->B, a->n, a->k, a->ldb)
                   : encode_kmajor(enc, &tmB, a->B, a->k, a->n, a->ldb, Cfg::BN)))
    return GS_K_LAUNCH_FAILED;
#else
  if (!encode_kmajor(enc, &tmA, a->A, a->k, a->m, a->lda, Cfg::BM) ||
      !encode_kmajor(enc, &tmB, a->B, a->k, a->n, a->ldb, Cfg::BN))
    return GS_K_LAUNCH_FAILED;
#endif

  Params p;
  p.m = (int)a->m;
  p.n = (int)a->n;
  p.k = (int)a->k;
  p.C = static_cast<const float *>(a->C);
  p.D = static_cast<float *>(a->D);
  p.ldc = a->ldc;
  p.ldd = a->ldd;
  p.alpha = a->alpha;
  p.beta = a->beta;
  p.alpha_dev = a->scalars_on_device ? a->alpha_dev : nullptr;
  p.beta_dev = a->scalars_on_device ? a->beta_dev : nullptr;
  p.bias = static_cast<const float *>(a->bias);

  if (ensure_attributes(a->device, a->ctx_id) != cudaSuccess) return GS_K_LAUNCH_FAILED;

  const unsigned grid = (unsigned)((a->m / Cfg::BM) * (a->n / Cfg::BN));
  gs_launch_begin();
#if GS_3XTF32_LAYOUTS
  if (lay == LAY_TN)
    gemm_f32_3xtf32_kernel<LAY_TN><<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, p);
  else if (lay == LAY_NN)
    gemm_f32_3xtf32_kernel<LAY_NN><<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, p);
  else if (lay == LAY_NT)
    gemm_f32_3xtf32_kernel<LAY_NT><<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, p);
  else
    gemm_f32_3xtf32_kernel<LAY_TT><<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, p);
#else
  gemm_f32_3xtf32_tn_kernel<<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, p);
#endif
  return gs_launch_end(0);
}
