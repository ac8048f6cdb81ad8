/* gemm_bf16_wgmma_persistent.cu: BF16 GEMM on Hopper tensor cores, layouts
 * TN, NN and NT, persistent grid with the epilogue overlapped with the next
 * tile's loads. Column-major as cuBLAS: D[m,n] = alpha * op(A) op(B) +
 * beta * C (+ bias[m]), FP32 accumulation, BF16 output:
 *   TN (forward):     A stored k x m, B stored k x n (both contiguous along k);
 *   NN (input grad):  A stored m x k (contiguous along m), B stored k x n;
 *   NT (weight grad): A stored m x k, B stored n x k (contiguous along n).
 * Design, contract, numbers and what was tried: kernels/gemm_bf16_wgmma_persistent.md.
 *
 * Technique (one per file: the persistent, store-overlapped variant of the
 * stage-1 kernel, dev/bf16_stage1/, whose main loop it keeps unchanged):
 *   - Persistent grid: min(tiles, SMs) CTAs, one per SM (227 KB of shared
 *     memory each). CTA b takes output tiles b, b + grid, b + 2*grid, ... of
 *     a grouped raster (GROUP_M tile rows of m per group, m fastest inside a
 *     group), so the ~132 tiles in flight at any time cover GROUP_M rows of
 *     A panels and about 132/GROUP_M columns of B panels.
 *   - Block tile 128 (m) x 256 (n) x 64 (k), 384 threads = 3 warpgroups.
 *     Warpgroup 0 produces (one thread issues every TMA load of every tile
 *     of the CTA, running ahead across tile boundaries as far as the ring
 *     allows); warpgroups 1 and 2 consume ("cooperative": both work on the
 *     same tile, 64 rows of m each, all 256 columns, wgmma m64n256k16, 128
 *     FP32 accumulators per thread). setmaxnreg 40 / 232 / 232.
 *   - 4-stage ring of 48 KB stages (TMA, 128-byte swizzle, full/empty
 *     mbarriers) whose slot/phase sequence runs on across tiles: the
 *     producer fills the next tile's stages while the
 *     consumers run the epilogue of the current one. Consumers release the
 *     last stage of every tile too (after wgmma.wait_group 0).
 *   - Operand layouts: a K-major operand (A in TN, B in TN and NN) is one
 *     TMA box of 64 (k) x rows per stage, read through K-major descriptors
 *     (k16 slice = +32 bytes). An MN-major operand (A in NN and NT, B in NT)
 *     is loaded as boxes of 64 (m or n, one 128-byte row) x 64 (k), 8 KB
 *     each (A: 2 per stage, B: 4), 128-byte swizzle, and read through
 *     MN-major descriptors (LBO = 8 KB between 64-wide m/n blocks, SBO =
 *     1 KB between 8-row k groups, k16 slice = +2 KB) with wgmma's
 *     transpose immediates (imm-trans-a / imm-trans-b = 1). The layout is a
 *     template parameter; the main loop, ring, epilogue and schedule are
 *     the same for all three.
 *   - Epilogue through a dedicated shared-memory staging area (not the
 *     ring): per consumer warpgroup, the 64 x 256 tile goes out in
 *     subtiles of 64 (m) x EPI_N (n) bf16 (8 KB for EPI_N 64), EPI_BUFS (2)
 *     buffers per warpgroup. Per subtile: alpha * acc (+ beta * C, one FMA)
 *     (+ bias), rounded once to bf16 and packed in registers; stmatrix
 *     .x4.trans writes the 8x8 fragments m-contiguous into the TMA box
 *     layout (128-byte swizzle, conflict-free); fence.proxy.async; a
 *     128-thread named barrier; one thread issues the TMA store
 *     (cp.async.bulk.tensor, bulk_group) and the warpgroup goes on to the
 *     next subtile, and after the last one straight back to wgmma. The
 *     stores drain while the next tile computes; a buffer is rewritten only
 *     after its previous store has finished reading it
 *     (cp.async.bulk.wait_group.read).
 *   - beta != 0: the producer prefetches the tile's C box into L2 about 8
 *     k-tiles before the tile ends (cp.async.bulk.prefetch.tensor); the
 *     epilogue reads C with plain loads in the fragment layout. beta == 0
 *     never reads C (nor prefetches it).
 *   - Tensor maps (A, B, D, and C for the prefetch) are encoded per call on
 *     the host and passed as __grid_constant__ kernel parameters: no device
 *     allocation, graph-capture safe. No atomics, no split-K: every output
 *     element is computed by one CTA in a fixed k order (deterministic).
 *
 * Constraints (gs_gemm_bf16_wgmma_persistent_supports, see the .h): TN, NN
 * or NT (not TT); m % 128, n % 256, k % 64; 16-byte aligned pointers;
 * leading dims multiples of 8 elements, at least the stored rows, and below
 * 2^39. TMA coordinates are 32-bit element indices (m, n, k < 2^31); C
 * addressing in the epilogue is 64-bit.
 *
 * Target sm_90a only (wgmma, setmaxnreg). Debug builds: -DGS_DEBUG_WAIT=1
 * (or -DGS_SM90_BOUNDED_WAIT=1, see sm90_ptx.cuh) trap on a stuck mbarrier
 * with a message naming the barrier (tag 100 + s: full[s], waited on by a
 * consumer; 200 + s: empty[s], waited on by the producer), parity, block and
 * thread.
 */
#if defined(GS_DEBUG_WAIT) && GS_DEBUG_WAIT && !defined(GS_SM90_BOUNDED_WAIT)
#define GS_SM90_BOUNDED_WAIT 1
#endif

#include "gemm_bf16_wgmma_persistent.h"

#include <cuda.h> /* CUtensorMap and its enums: types only, libcuda is not linked */
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>

#include "gs_launch.h"
#include "sm90_host.h"
#include "sm90_ptx.cuh"

namespace gs_bf16_wgmma_persistent {

using namespace gs_sm90;
typedef __nv_bfloat16 bf16;

/* Tile configuration: constexpr data, not scattered literals. */
struct Cfg {
  static constexpr int BM = 128, BN = 256, BK = 64;
  static constexpr int STAGES = 4;
  static constexpr int CONSUMERS = 2;                   /* consumer warpgroups */
  static constexpr int THREADS = 128 * (CONSUMERS + 1); /* + 1 producer warpgroup */
  static constexpr int WG_M = BM / CONSUMERS;           /* rows per consumer: 64 */
  static constexpr int WG_N = BN;                       /* wgmma N */
  static constexpr int ACC = WG_M * WG_N / 128;         /* FP32 accumulators per thread */
  static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
  static constexpr int GROUP_M = 16;                    /* tile rows per raster group */
  static constexpr uint32_t A_STAGE_BYTES = BM * BK * 2, B_STAGE_BYTES = BN * BK * 2;
  static constexpr uint32_t STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;
  static constexpr int CONSUMER_WARPS = CONSUMERS * 4; /* arrivals that free a stage */
  /* Epilogue: per consumer, subtiles of WG_M (m) x EPI_N (n) bf16, stored
   * m-contiguous with the 128-byte swizzle (a column of 64 bf16 is exactly
   * one 128-byte swizzle row), EPI_BUFS buffers in rotation. */
  static constexpr int EPI_N = 64;   /* epilogue subtile columns */
  static constexpr int EPI_BUFS = 2; /* staging buffers per consumer warpgroup */
  static constexpr int EPI_SUBTILES = BN / EPI_N;
  static constexpr uint32_t EPI_BUF_BYTES = WG_M * EPI_N * 2;
  /* The producer prefetches C into L2 this many k-tiles before a tile ends. */
  static constexpr int C_PREFETCH_KT = 8;
};
static_assert(Cfg::BK * 2 == 128, "a k-tile row is exactly one 128-byte swizzle span");
static_assert(Cfg::BM <= 256 && Cfg::BN <= 256, "TMA box dims are at most 256");
static_assert(Cfg::WG_M == 64, "one wgmma m64 per consumer warpgroup");
static_assert(Cfg::WG_M * 2 == 128, "an output column of a consumer's rows is one 128-byte "
                                    "swizzle row: the TMA store box is 64 (m) x EPI_N (n)");
static_assert(Cfg::WG_N == 256 && Cfg::ACC == 128, "wgmma m64n256k16: 128 accumulators");
static_assert(Cfg::PRODUCER_REGS * 128 + Cfg::CONSUMER_REGS * 128 * Cfg::CONSUMERS <= 65536,
              "setmaxnreg budgets fit the register file");
static_assert(Cfg::STAGES >= 2, "a ring needs two stages");
static_assert(Cfg::EPI_N % 16 == 0 && Cfg::BN % Cfg::EPI_N == 0 && Cfg::EPI_N <= 256,
              "epilogue subtiles: whole stmatrix.x4 column pairs (16 columns), box dim <= 256");
static_assert(Cfg::EPI_BUFS >= 2, "one barrier per subtile needs double buffering");
static_assert(Cfg::EPI_SUBTILES % Cfg::EPI_BUFS == 0,
              "the buffer of a subtile is a compile-time constant (same rotation every tile)");
static_assert(Cfg::EPI_BUF_BYTES % 1024 == 0, "staging buffers stay 1024-byte aligned");
static_assert(GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_M % Cfg::BM == 0, "documented m class");
static_assert(GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_N % Cfg::BN == 0, "documented n class");
static_assert(GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_K % Cfg::BK == 0, "documented k class");

/* The shared-memory layout; sizeof(Smem) + 1024 (alignment slack) is the
 * launch's dynamic shared memory. Tiles and staging buffers are 1024-byte
 * aligned (128B swizzle atom). */
struct Smem {
  alignas(1024) bf16 a[Cfg::STAGES][Cfg::BM * Cfg::BK];
  alignas(1024) bf16 b[Cfg::STAGES][Cfg::BN * Cfg::BK];
  alignas(1024) bf16 epi[Cfg::CONSUMERS][Cfg::EPI_BUFS][Cfg::WG_M * Cfg::EPI_N];
  uint64_t full[Cfg::STAGES];
  uint64_t empty[Cfg::STAGES];
};
static_assert(sizeof(bf16) * Cfg::BM * Cfg::BK == Cfg::A_STAGE_BYTES, "");
static_assert(sizeof(bf16) * Cfg::WG_M * Cfg::EPI_N == Cfg::EPI_BUF_BYTES, "");
static_assert(Cfg::A_STAGE_BYTES % 1024 == 0 && Cfg::B_STAGE_BYTES % 1024 == 0,
              "every stage tile stays 1024-byte aligned");
constexpr size_t kSmemBytes = sizeof(Smem) + 1024;
static_assert(kSmemBytes <= 227 * 1024, "fits the sm_90 per-block shared memory limit");

struct Params {
  int tiles_m, tiles_n, num_tiles, KT;
  const bf16 *C; /* read only when beta != 0 */
  int64_t ldc;
  float alpha, beta;
  const float *alpha_dev, *beta_dev; /* non-NULL: read on the device */
  const bf16 *bias;
};

/* Operand layouts (cuBLAS column-major, op(A) op(B)). An operand is
 * "K-major" when its stored columns run along k (TN: A stored k x m, B
 * stored k x n) and "MN-major" when they run along m or n (A stored m x k
 * in NN and NT; B stored n x k in NT). */
enum Layout { LAY_TN = 0, LAY_NN = 1, LAY_NT = 2 };
template <int LAY>
struct Lay {
  static constexpr bool A_MN = LAY != LAY_TN; /* A M-major: wgmma imm-trans-a = 1 */
  static constexpr bool B_MN = LAY == LAY_NT; /* B N-major: wgmma imm-trans-b = 1 */
};

/* MN-major operands in shared memory (PTX ISA, "Shared Memory Matrix
 * Layout" / "Matrix Descriptor", 128-byte swizzle, MN-major): TMA writes
 * boxes of 64 (m or n, contiguous, one 128-byte row) x BK (k) with the
 * 128-byte swizzle, 8 KB each, one after the other along m/n. Per box, k
 * row r is the 128-byte row r; 8 rows (1024 B) form one swizzle atom of
 * 64 (mn) x 8 (k). The canonical MN-major SW128 layout is
 *   ((8 elems, 8 chunks, mn blocks), (8 k rows, k groups))
 *   : ((1, 16 B, LBO), (128 B, SBO))
 * so LBO = the byte distance between 64-wide mn blocks (one box: 8 KB) and
 * SBO = the distance between 8-row k groups (1024 B). A k16 slice is two k
 * groups; the next one starts 16 rows (2048 B, whole atoms) further on. */
static constexpr uint32_t MN_BOX = 64;                      /* mn extent of one box */
static constexpr uint32_t MN_BOX_BYTES = MN_BOX * 64 * 2;   /* x BK k rows: 8 KB */
static constexpr uint32_t MN_LBO = MN_BOX_BYTES;            /* next 64 of m/n */
static constexpr uint32_t MN_SBO = 8 * 128;                 /* next 8 of k */
static constexpr uint32_t MN_K16_BYTES = 16 * 128;          /* next k16 slice */
static_assert(MN_BOX * 2 == 128, "an MN-major box row is exactly one 128-byte swizzle span");
static_assert(Cfg::WG_M == (int)MN_BOX, "a consumer's 64 rows of an M-major A are one box");
static_assert(MN_BOX_BYTES == MN_BOX * Cfg::BK * 2 && MN_BOX_BYTES % 1024 == 0,
              "MN-major boxes are whole swizzle atoms, 1024-byte aligned");
static_assert((MN_LBO >> 4) < (1u << 14) && (MN_SBO >> 4) < (1u << 14), "14-bit fields");

__device__ __forceinline__ uint64_t smem_desc_sw128_mnmajor(const void *tile) {
  const uint64_t addr = smem_u32(tile);
  uint64_t d = 0;
  d |= (addr & 0x3FFFFull) >> 4;
  d |= (uint64_t)(MN_LBO >> 4) << 16;
  d |= (uint64_t)(MN_SBO >> 4) << 32;
  d |= (uint64_t)1 << 62; /* 128-byte swizzle; base offset 0 (1024-aligned boxes) */
  return d;
}


/* Barrier tags for the bounded-wait debug message (tag + stage). */
enum { TAG_FULL = 100, TAG_EMPTY = 200 };

/* Tile `tile` of the grouped raster -> (tile row, tile column). Groups of
 * GROUP_M tile rows (the last group may be shorter); inside a group, tiles
 * go down the rows first, then across the columns. Host and device, so a
 * host program can check the raster with the same code. */
__host__ __device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n,
                                                     int group_m, int &tm, int &tn) {
  const int per_group = group_m * tiles_n;
  const int group = tile / per_group;
  const int first_m = group * group_m;
  const int rows = min(tiles_m - first_m, group_m);
  const int in_group = tile - group * per_group;
  tm = first_m + in_group % rows;
  tn = in_group / rows;
}

/* Byte offset, inside a 64 (m) x EPI_N (n) staging buffer, of the 16-byte
 * run this lane addresses for stmatrix.x4.trans of column pair-group gp
 * (columns 16*gp .. 16*gp + 15 of the subtile). Matrix q = lane / 8 is
 * rows 8*(q&1) .. +7 of the warp's 16 (m), columns 8*(q>>1) .. +7 of the 16;
 * lane%8 is the column inside it. Column c of the buffer is a 128-byte row
 * of the TMA box; its 16-byte run j (rows 8j .. 8j+7) sits at run j ^ (c%8)
 * (128-byte swizzle, buffer 1024-byte aligned). c % 8 == lane % 8. */
__host__ __device__ __forceinline__ uint32_t stmatrix_lane_offset(int warp, int lane, int gp) {
  const int col = 16 * gp + 8 * (lane >> 4) + (lane & 7);
  const int run = 2 * warp + ((lane >> 3) & 1);
  return (uint32_t)(col * 128 + ((run ^ (lane & 7)) << 4));
}

/* One subtile of a consumer's epilogue: registers -> bf16 -> staging buffer.
 * acc fragment of wgmma m64nN: value v of warp w, lane l is row
 * w*16 + l/4 + 8*((v/2)%2), column (v/4)*8 + (l%4)*2 + v%2. Column group
 * g = v/4 holds two 8x8 matrices: rows +0..7 (acc[4g], acc[4g+1]) and rows
 * +8..15 (acc[4g+2], acc[4g+3]); stmatrix.x4 takes groups g and g+1. */
template <bool kReadC>
__device__ __forceinline__ void epilogue_subtile(const float (&acc)[Cfg::ACC], int sub, uint32_t buf,
                                                 uint32_t lane_off, float alpha, float beta,
                                                 const float (&bias)[2], const bf16 *Cp,
                                                 int64_t ldc) {
#pragma unroll
  for (int gp = 0; gp < Cfg::EPI_N / 16; ++gp) {
    uint32_t r[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int h = q & 1;                                     /* rows +0 or +8 */
      const int g = sub * (Cfg::EPI_N / 8) + 2 * gp + (q >> 1); /* 8-column group */
      /* Explicit roundings (no contraction of alpha*acc + bias into one
       * FMA): exactly the stage-1 kernel's operations. */
      float v0 = __fmul_rn(alpha, acc[4 * g + 2 * h]);
      float v1 = __fmul_rn(alpha, acc[4 * g + 2 * h + 1]);
      if (kReadC) {
        const bf16 *c = Cp + (int64_t)(8 * g) * ldc + 8 * h;
        v0 = fmaf(beta, __bfloat162float(c[0]), v0);
        v1 = fmaf(beta, __bfloat162float(c[ldc]), v1);
      }
      r[q] = pack_bf16x2(__fadd_rn(v0, bias[h]), __fadd_rn(v1, bias[h]));
    }
    stmatrix_x4_trans(buf + lane_off + (uint32_t)gp * 16u * 128u, r[0], r[1], r[2], r[3]);
  }
}

/* A consumer warpgroup's whole epilogue for one tile: EPI_SUBTILES subtiles,
 * each staged, fenced, barriered and handed to one TMA store. Thread t == 0
 * of the warpgroup owns the bulk async-groups. Before the barrier of
 * subtile s it waits until the store that last used the buffer of subtile
 * s + 1 has finished reading it (at most EPI_BUFS - 2 newer stores pending),
 * so one barrier per subtile suffices. */
template <bool kReadC>
__device__ __forceinline__ void epilogue_tile(const float (&acc)[Cfg::ACC], Smem &sm, int cw,
                                              int t, uint32_t lane_off, float alpha, float beta,
                                              const float (&bias)[2], const bf16 *Cp,
                                              int64_t ldc, const CUtensorMap *tmD, int m_store,
                                              int n0) {
#pragma unroll
  for (int sub = 0; sub < Cfg::EPI_SUBTILES; ++sub) {
    bf16 *buf = sm.epi[cw][sub % Cfg::EPI_BUFS];
    /* sub is a constant after unrolling, so acc[] indices are too. */
    epilogue_subtile<kReadC>(acc, sub, smem_u32(buf), lane_off, alpha, beta, bias, Cp, ldc);
    /* Every writer: generic-proxy smem writes -> visible to the async proxy. */
    fence_proxy_async_smem();
    if (t == 0) bulk_wait_group_read<Cfg::EPI_BUFS - 2>();
    named_barrier_sync(2 + cw, 128);
    if (t == 0) {
      tma_store_2d(tmD, buf, m_store, n0 + sub * Cfg::EPI_N);
      bulk_commit_group();
    }
  }
}

template <int LAY>
__global__ void __launch_bounds__(Cfg::THREADS, 1)
    gemmshim_bf16_persistent_kernel(const __grid_constant__ CUtensorMap tmA,
                                    const __grid_constant__ CUtensorMap tmB,
                                    const __grid_constant__ CUtensorMap tmD,
                                    const __grid_constant__ CUtensorMap tmC, const Params p) {
  static_assert(LAY == LAY_TN || LAY == LAY_NN || LAY == LAY_NT, "layouts TN, NN, NT");
  constexpr bool A_MN = Lay<LAY>::A_MN, B_MN = Lay<LAY>::B_MN;
  static_assert(Cfg::BM % MN_BOX == 0 && Cfg::BN % MN_BOX == 0 && Cfg::BK == 64,
                "MN-major tiles are whole 64 x 64 boxes");
  extern __shared__ unsigned char smem_raw[];
  /* Align the shared-space offset (not just the generic pointer) to 1024. */
  const uint32_t pad = (1024u - (smem_u32(smem_raw) & 1023u)) & 1023u;
  Smem &sm = *reinterpret_cast<Smem *>(smem_raw + pad);

  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < Cfg::STAGES; ++s) {
      mbar_init(&sm.full[s], 1);
      mbar_init(&sm.empty[s], Cfg::CONSUMER_WARPS);
    }
    fence_mbarrier_init();
    fence_proxy_async_smem();
    prefetch_tensormap(&tmA);
    prefetch_tensormap(&tmB);
    prefetch_tensormap(&tmD);
  }
  __syncthreads();
  /* Tiles, walked by CTAs in a grouped raster. */
  const int first_tile = (int)blockIdx.x;
  const int tile_stride = (int)gridDim.x;
  const int num_tiles = p.num_tiles;
  const int tiles_m = p.tiles_m;

  const int wg = warpgroup_index();
  if (wg == 0) {
    /* ---- producer warpgroup: one thread issues every TMA load ---- */
    setmaxnreg_dec<Cfg::PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      const float beta = p.beta_dev ? *p.beta_dev : p.beta;
      const bool prefetch_c = beta != 0.f;
      const int pf_kt = p.KT > Cfg::C_PREFETCH_KT ? p.KT - Cfg::C_PREFETCH_KT : 0;
      int s = 0;
      uint32_t phase = 0;
#pragma unroll 1
      for (int tile = first_tile; tile < num_tiles; tile += tile_stride) {
        int tm, tn;
        tile_coords(tile, tiles_m, p.tiles_n, Cfg::GROUP_M, tm, tn);
        const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;
#pragma unroll 1
        for (int kt = 0; kt < p.KT; ++kt) {
          mbar_wait(&sm.empty[s], phase ^ 1u, TAG_EMPTY + s); /* fresh slots pass at once */
          mbar_arrive_expect_tx(&sm.full[s], Cfg::STAGE_BYTES);
          if (!A_MN) {
            tma_load_2d(sm.a[s], &tmA, &sm.full[s], kt * Cfg::BK, m0);
          } else {
            /* A stored m x k: BM / 64 boxes of 64 (m) x 64 (k), 8 KB apart. */
#pragma unroll
            for (int i = 0; i < Cfg::BM / (int)MN_BOX; ++i)
              tma_load_2d(&sm.a[s][i * MN_BOX * Cfg::BK], &tmA, &sm.full[s],
                          m0 + i * (int)MN_BOX, kt * Cfg::BK);
          }
          if (B_MN) {
            /* B stored n x k: BN / 64 boxes of 64 (n) x 64 (k). */
#pragma unroll
            for (int box = 0; box < Cfg::BN / (int)MN_BOX; ++box)
              tma_load_2d(&sm.b[s][box * MN_BOX * Cfg::BK], &tmB, &sm.full[s],
                          n0 + box * (int)MN_BOX, kt * Cfg::BK);
          } else {
            tma_load_2d(sm.b[s], &tmB, &sm.full[s], kt * Cfg::BK, n0);
          }
          if (prefetch_c && kt == pf_kt) {
            tma_prefetch_l2_2d(&tmC, m0, n0);
            tma_prefetch_l2_2d(&tmC, m0 + Cfg::WG_M, n0);
          }
          if (++s == Cfg::STAGES) {
            s = 0;
            phase ^= 1u;
          }
        }
      }
    }
    return;
  }

  /* ---- consumer warpgroups ---- */
  setmaxnreg_inc<Cfg::CONSUMER_REGS>();
  const int cw = wg - 1;           /* which 64 rows of the block tile */
  const int t = threadIdx.x & 127; /* thread in the warpgroup */
  const int warp = t >> 5, lane = t & 31;
  const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
  const float beta = p.beta_dev ? *p.beta_dev : p.beta;
  const uint32_t lane_off = stmatrix_lane_offset(warp, lane, 0);
  const int row_in_tile = cw * Cfg::WG_M + warp * 16 + (lane >> 2); /* + 8 for h = 1 */

  float acc[Cfg::ACC];
  int s = 0, prev_s = 0;
  uint32_t phase = 0;
#pragma unroll 1
  for (int tile = first_tile; tile < num_tiles; tile += tile_stride) {
    int tm, tn;
    tile_coords(tile, tiles_m, p.tiles_n, Cfg::GROUP_M, tm, tn);
    const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;
    /* Bias for this thread's two rows, loaded now so the main loop hides it. */
    float bias[2] = {0.f, 0.f};
    if (p.bias) {
      bias[0] = __bfloat162float(p.bias[m0 + row_in_tile]);
      bias[1] = __bfloat162float(p.bias[m0 + row_in_tile + 8]);
    }

    /* Main loop: the first wgmma of the tile has scale-d off (D = A*B),
     * which replaces zeroing the accumulators (same bits: the kernel's
     * doc). */
#pragma unroll 1
    for (int kt = 0; kt < p.KT; ++kt) {
      mbar_wait(&sm.full[s], phase, TAG_FULL + s);
      /* This consumer's 64 rows of A: K-major, rows cw*64.. of the 128-row
       * box; M-major, box cw (WG_M == MN_BOX): the same byte offset. */
      const uint64_t da = A_MN ? smem_desc_sw128_mnmajor(&sm.a[s][cw * Cfg::WG_M * Cfg::BK])
                               : smem_desc_sw128_kmajor(&sm.a[s][cw * Cfg::WG_M * Cfg::BK]);
      const uint64_t db = B_MN ? smem_desc_sw128_mnmajor(&sm.b[s][0])
                               : smem_desc_sw128_kmajor(&sm.b[s][0]);
      /* k16 slice kk: 32 bytes along a K-major row, or 16 rows of an
       * MN-major box. */
      constexpr uint32_t A_K16 = A_MN ? MN_K16_BYTES : 32u, B_K16 = B_MN ? MN_K16_BYTES : 32u;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < Cfg::BK / 16; ++kk)
        wgmma_m64n256k16_bf16_t<A_MN ? 1 : 0, B_MN ? 1 : 0>(
            acc, smem_desc_advance(da, kk * A_K16), smem_desc_advance(db, kk * B_K16),
            (kt > 0 || kk > 0) ? 1 : 0);
      wgmma_commit();
      /* Everything but the group just issued is done: free its stage. */
      wgmma_wait<1>();
      if (kt > 0 && lane == 0) mbar_arrive(&sm.empty[prev_s]);
      prev_s = s;
      if (++s == Cfg::STAGES) {
        s = 0;
        phase ^= 1u;
      }
    }
    wgmma_wait<0>();
    /* The tile's last stage is free too: the producer is already filling
     * the ring with the next tile's k-tiles. */
    if (lane == 0) mbar_arrive(&sm.empty[prev_s]);
    wgmma_reg_fence(acc);

    /* ---- epilogue (overlaps the producer's loads of the next tile) ---- */
    const int m_store = m0 + cw * Cfg::WG_M;
    if (beta != 0.f) {
      const bf16 *Cp = p.C + (int64_t)(n0 + 2 * (lane & 3)) * p.ldc + (m0 + row_in_tile);
      epilogue_tile<true>(acc, sm, cw, t, lane_off, alpha, beta, bias, Cp, p.ldc, &tmD, m_store,
                          n0);
    } else {
      epilogue_tile<false>(acc, sm, cw, t, lane_off, alpha, beta, bias, nullptr, 0, &tmD,
                           m_store, n0);
    }
  }
  /* The staging buffers must stay alive until every store has read them;
   * wait for full completion (cheap, once per CTA). */
  if (t == 0) bulk_wait_group<0>();
}

/* ------------------------------------------------------------------ host */

/* aligned16() and get_encode(): kernels/sm90_host.h */

/* A column-major bf16 matrix of `rows` (contiguous) x `cols`, `ld` elements
 * apart, as a 2-D tensor map with boxes of box0 (contiguous) x box1. */
static int encode_2d(PFN_cuTensorMapEncodeTiled_v12000 enc, CUtensorMap *map, const void *ptr,
                     int64_t rows, int64_t cols, int64_t ld, uint32_t box0, uint32_t box1,
                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promo) {
  const cuuint64_t dims[2] = {(cuuint64_t)rows, (cuuint64_t)cols};
  const cuuint64_t strides[1] = {(cuuint64_t)ld * sizeof(bf16)};
  const cuuint32_t box[2] = {box0, box1};
  const cuuint32_t estrides[2] = {1, 1};
  const CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(ptr), dims,
                         strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promo,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

/* Per device: the SM count, read once; and the context the kernels' shared
 * memory attribute was last set in (0: none yet; a context made again after
 * cudaDeviceReset has a new identity). cudaDeviceGetAttribute and
 * cudaFuncSetAttribute are not stream operations, so they are safe while a
 * stream captures. */
static constexpr int kMaxDevices = 64;
static std::atomic<int> sm_count_of[kMaxDevices]; /* 0: not read yet */
static std::atomic<uint64_t> attr_ctx[kMaxDevices];

template <typename F>
static int set_smem_attr(F *kernel) {
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           (int)kSmemBytes) == cudaSuccess)
    return 1;
  (void)cudaGetLastError();
  return 0;
}

static int device_setup(int dev, uint64_t ctx_id, int *sms) {
  if (dev < 0 || dev >= kMaxDevices) return 0;
  if (!sm_count_of[dev].load(std::memory_order_acquire)) {
    int n = 0;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n <= 0) {
      (void)cudaGetLastError();
      return 0;
    }
    sm_count_of[dev].store(n, std::memory_order_release);
  }
  if (!ctx_id || attr_ctx[dev].load(std::memory_order_acquire) != ctx_id) {
    if (!set_smem_attr(gemmshim_bf16_persistent_kernel<LAY_TN>) ||
        !set_smem_attr(gemmshim_bf16_persistent_kernel<LAY_NN>) ||
        !set_smem_attr(gemmshim_bf16_persistent_kernel<LAY_NT>))
      return 0;
    if (ctx_id) attr_ctx[dev].store(ctx_id, std::memory_order_release);
  }
  *sms = sm_count_of[dev].load(std::memory_order_acquire);
  return 1;
}

}  // namespace gs_bf16_wgmma_persistent

using namespace gs_bf16_wgmma_persistent;

template <typename F>
static int load_kernel(F *kernel) {
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, kernel) == cudaSuccess) return 1;
  (void)cudaGetLastError();
  return 0;
}

extern "C" int gs_gemm_bf16_wgmma_persistent_preload(void) {
  const int ok = load_kernel(gemmshim_bf16_persistent_kernel<LAY_TN>) &&
                 load_kernel(gemmshim_bf16_persistent_kernel<LAY_NN>) &&
                 load_kernel(gemmshim_bf16_persistent_kernel<LAY_NT>);
  return ok ? 0 : -1;
}

extern "C" int gs_gemm_bf16_wgmma_persistent_supports(int64_t m, int64_t n, int64_t k,
                                                      int trans_a, int trans_b, const void *A,
                                                      int64_t lda, const void *B, int64_t ldb,
                                                      const void *C, int64_t ldc, int check_c) {
  const int64_t lim = (int64_t)1 << 31;
  const int64_t ld_lim = (int64_t)1 << 39; /* TMA global stride < 2^40 bytes */
  const int64_t ldal = GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_LD;
  if (m <= 0 || n <= 0 || k <= 0 || m >= lim || n >= lim || k >= lim) return 0;
  if (m % GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_M || n % GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_N ||
      k % GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_K)
    return 0;
  /* TN (A stored k x m, B k x n), NN (A m x k, B k x n), NT (A m x k,
   * B n x k); not TT. The stored rows bound the leading dims. */
  const int tn = trans_a == 1 && trans_b == 0, nn = trans_a == 0 && trans_b == 0,
            nt = trans_a == 0 && trans_b == 1;
  if (!tn && !nn && !nt) return 0;
  if ((m / Cfg::BM) * (n / Cfg::BN) >= lim) return 0; /* tile indices are int */
  if (!A || !B || !aligned16(A) || !aligned16(B)) return 0;
  if (lda % ldal || ldb % ldal) return 0;
  if (lda < (tn ? k : m) || ldb < (nt ? n : k)) return 0;
  if (lda >= ld_lim || ldb >= ld_lim) return 0;
  if (check_c) {
    if (!C || !aligned16(C) || ldc % ldal || ldc < m || ldc >= ld_lim) return 0;
  }
  return 1;
}

extern "C" gs_kstatus gs_gemm_bf16_wgmma_persistent_launch(const gs_kernel_args *a) {
  if (!a) return GS_K_UNSUPPORTED;
  const int check_c = a->scalars_on_device ? 1 : (a->beta != 0.f);
  if (!gs_gemm_bf16_wgmma_persistent_supports(a->m, a->n, a->k, a->trans_a, a->trans_b, a->A,
                                              a->lda, a->B, a->ldb, a->C, a->ldc, check_c))
    return GS_K_UNSUPPORTED;
  if (!a->D || !aligned16(a->D) || a->ldd % GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_LD ||
      a->ldd < a->m || a->ldd >= ((int64_t)1 << 39))
    return GS_K_UNSUPPORTED;
  if (a->bias && !aligned16(a->bias)) return GS_K_UNSUPPORTED;
  if (a->scalars_on_device && (!a->alpha_dev || !a->beta_dev)) return GS_K_UNSUPPORTED;
  /* D may alias C only exactly (same start, same ld). */
  if (check_c && a->C == a->D && a->ldc != a->ldd) return GS_K_UNSUPPORTED;

  PFN_cuTensorMapEncodeTiled_v12000 enc = get_encode();
  if (!enc) return GS_K_LAUNCH_FAILED;
  /* A and B: K-major boxes of BK x (BM | BN) with the 128-byte swizzle.
   * D: store boxes of 64 (m) x EPI_N (n), 128-byte swizzle (one 128-byte
   * row per column). C: L2 prefetch boxes of 64 x 256, only when C may be
   * read (else the D map stands in, never used). */
  const int lay = a->trans_a ? LAY_TN : a->trans_b ? LAY_NT : LAY_NN; /* supports() checked */
  const bool a_mn = lay != LAY_TN, b_mn = lay == LAY_NT;
  /* MN-major A (NN, NT): boxes of 64 (m) x BK (k), 128-byte swizzle, BM / 64
   * per stage; MN-major B (NT): 64 (n) x BK, BN / 64 per stage. */
  CUtensorMap tmA, tmB, tmD, tmC;
  if (!(a_mn ? encode_2d(enc, &tmA, a->A, a->m, a->k, a->lda, MN_BOX, Cfg::BK,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
             : encode_2d(enc, &tmA, a->A, a->k, a->m, a->lda, Cfg::BK, Cfg::BM,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B)) ||
      !encode_2d(enc, &tmD, a->D, a->m, a->n, a->ldd, Cfg::WG_M, Cfg::EPI_N,
                 CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE))
    return GS_K_LAUNCH_FAILED;
  if (check_c) {
    if (!encode_2d(enc, &tmC, a->C, a->m, a->n, a->ldc, Cfg::WG_M, Cfg::BN,
                   CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B))
      return GS_K_LAUNCH_FAILED;
  } else {
    tmC = tmD;
  }

  Params p;
  p.tiles_m = (int)(a->m / Cfg::BM);
  p.tiles_n = (int)(a->n / Cfg::BN);
  p.num_tiles = p.tiles_m * p.tiles_n; /* < 2^31: checked by supports */
  p.KT = (int)(a->k / Cfg::BK);
  p.C = static_cast<const bf16 *>(a->C);
  p.ldc = a->ldc;
  p.alpha = a->alpha;
  p.beta = a->beta;
  p.alpha_dev = a->scalars_on_device ? a->alpha_dev : nullptr;
  p.beta_dev = a->scalars_on_device ? a->beta_dev : nullptr;
  p.bias = static_cast<const bf16 *>(a->bias);

  int sms = 0;
  if (!device_setup(a->device, a->ctx_id, &sms)) return GS_K_LAUNCH_FAILED;
  /* The caller's SM-count target: one CTA per SM, so at most that many
   * CTAs. Tiles per CTA grow; the bits do not change (each tile is computed
   * the same way whichever CTA takes it). */
  if (a->sm_limit > 0 && a->sm_limit < sms) sms = a->sm_limit;
  if (!(b_mn ? encode_2d(enc, &tmB, a->B, a->n, a->k, a->ldb, MN_BOX, Cfg::BK,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
             : encode_2d(enc, &tmB, a->B, a->k, a->n, a->ldb, Cfg::BK, Cfg::BN,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B)))
    return GS_K_LAUNCH_FAILED;

  const unsigned grid = (unsigned)(p.num_tiles < sms ? p.num_tiles : sms);
  gs_launch_begin();
  if (lay == LAY_TN)
    gemmshim_bf16_persistent_kernel<LAY_TN>
        <<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, tmD, tmC, p);
  else if (lay == LAY_NN)
    gemmshim_bf16_persistent_kernel<LAY_NN>
        <<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, tmD, tmC, p);
  else
    gemmshim_bf16_persistent_kernel<LAY_NT>
        <<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, tmD, tmC, p);
  return gs_launch_end(0);
}

