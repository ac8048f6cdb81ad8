/* sm90_ptx.cuh: Hopper (sm_90a) PTX, one small named __device__ helper per
 * instruction family. Shared by the tensor-core kernels (the BF16 and 3xTF32
 * kernels here, the stage-1 BF16 kernel in dev/). Header-only, device code only; include it
 * from a .cu compiled for sm_90a (-gencode=arch=compute_90a,code=sm_90a):
 * wgmma and setmaxnreg exist only there.
 *
 * Families:
 *   addresses     smem_u32
 *   warps         warpgroup_index, elect_one_sync, named_barrier_sync,
 *                 bar_red_or, tid_x
 *   registers     setmaxnreg_inc<N> / setmaxnreg_dec<N>
 *   fences        fence_mbarrier_init, fence_proxy_async_smem
 *   mbarrier      mbar_init, mbar_arrive, mbar_arrive_expect_tx,
 *                 mbar_try_wait_parity, mbar_wait (bounded in debug builds),
 *                 mbar_arrive_cluster (on the same barrier in another CTA)
 *   clusters      cluster_ctarank, cluster_id_x, cluster_count_x, cluster_sync
 *   TMA           prefetch_tensormap, tma_load_2d, tma_load_2d_multicast,
 *                 tma_store_2d,
 *                 tma_prefetch_l2_2d, bulk_commit_group,
 *                 bulk_wait_group<N>, bulk_wait_group_read<N>
 *   stmatrix      stmatrix_x4_trans, pack_bf16x2
 *   wgmma         wgmma_fence, wgmma_commit, wgmma_wait<N>,
 *                 smem_desc_sw128_kmajor, wgmma_m64n{128,256}k16_bf16,
 *                 wgmma_m64n128k16_bf16_rs (A from registers)
 *
 * Debug builds: -DGS_SM90_BOUNDED_WAIT=1 makes mbar_wait give up after
 * GS_SM90_WAIT_NS of the global timer (default 2 s: how long a failed
 * try_wait suspends is the hardware's, so polls are no clock), print which
 * barrier, block and thread, and __trap(): a protocol bug then costs
 * seconds of device time, not a hung command.
 *
 * Written from the PTX ISA (sections on mbarrier, cp.async.bulk.tensor,
 * wgmma and its shared-memory matrix descriptor). */
#ifndef GS_SM90_PTX_CUH
#define GS_SM90_PTX_CUH

#include <stdint.h>
#include <stdio.h>

#ifndef GS_SM90_BOUNDED_WAIT
#define GS_SM90_BOUNDED_WAIT 0
#endif
#ifndef GS_SM90_WAIT_NS
#define GS_SM90_WAIT_NS 2000000000ull
#endif

namespace gs_sm90 {

/* ---------------------------------------------------------- addresses */
__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/* -------------------------------------------------------------- warps */
/* Which warpgroup (4 consecutive warps, 128 threads) this thread is in. The
 * value is made warp-uniform so the compiler can branch on it without
 * divergence. */
__device__ __forceinline__ int warpgroup_index() {
  return __shfl_sync(0xffffffffu, (int)(threadIdx.x / 128), 0);
}

/* 1 in exactly one active lane of the (fully active) warp, 0 elsewhere. */
__device__ __forceinline__ uint32_t elect_one_sync() {
  uint32_t pred = 0;
  asm volatile(
      "{\n.reg .b32 r;\n.reg .pred p;\n"
      "elect.sync r|p, 0xffffffff;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(pred));
  return pred;
}

/* Barrier among `count` threads (a multiple of 32) on hardware barrier `id`
 * (1..15; 0 is __syncthreads). */
__device__ __forceinline__ void named_barrier_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/* OR of `pred` over the `count` threads (a multiple of 32) that meet at
 * named barrier `id`: a barrier that also tells each of them whether any
 * had pred set. */
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

/* threadIdx.x read anew (not kept in a register across a role split). */
__device__ __forceinline__ uint32_t tid_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(r));
  return r;
}

/* ---------------------------------------------------------- registers */
/* Per-warpgroup register budget (all threads of a warpgroup execute it).
 * Takes effect only with a register cap at kernel entry
 * (__launch_bounds__(threads, 1)); N is a multiple of 8 in [24, 256]. */
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg range");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg range");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

/* ------------------------------------------------------------- fences */
/* Make mbarrier.init visible to the other threads and to the async proxy
 * (TMA completing transactions on it). Follow with a CTA barrier. */
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
/* Order this thread's generic-proxy shared-memory accesses with later
 * async-proxy ones (TMA, wgmma operand reads), or the other way round. */
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* ----------------------------------------------------------- mbarrier */
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
}
/* One arrival (release, CTA scope). */
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
  asm volatile(
      "{\n.reg .b64 st;\n"
      "mbarrier.arrive.release.cta.shared::cta.b64 st, [%0];\n}\n" ::"r"(smem_u32(bar))
      : "memory");
}
/* One arrival that also expects `bytes` more transaction bytes (the TMA
 * loads that complete on this barrier). */
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
  asm volatile(
      "{\n.reg .b64 st;\n"
      "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(
          smem_u32(bar)),
      "r"(bytes)
      : "memory");
}
/* 1 once the phase with this parity has completed (acquire, CTA scope);
 * the hardware may suspend the thread a while before answering 0. */
__device__ __forceinline__ uint32_t mbar_try_wait_parity(uint64_t *bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(smem_u32(bar)), "r"(parity)
      : "memory");
  return ok;
}
/* Wait for the phase with this parity. A fresh barrier is in phase 0, so
 * waiting for parity 1 returns at once ("the previous phase is complete"):
 * producers start with parity 1 on their "slot empty" barriers. `tag`
 * names the barrier in the debug message. */
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity, int tag = 0) {
#if GS_SM90_BOUNDED_WAIT
  uint64_t t0 = 0, t;
  while (!mbar_try_wait_parity(bar, parity)) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (!t0) t0 = t;
    if (t - t0 > GS_SM90_WAIT_NS) {
      printf("gs_sm90: mbarrier wait timed out: tag %d parity %u block (%d,%d,%d) thread %d\n",
             tag, parity, (int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z, (int)threadIdx.x);
      __trap();
    }
  }
#else
  (void)tag;
  while (!mbar_try_wait_parity(bar, parity)) {
  }
#endif
}

/* One arrival on the barrier at the same shared-memory offset as `bar`, in
 * the CTA of rank `cta` of this cluster (which may be this CTA). Default
 * semantics (release, CTA scope), as CUTLASS's ClusterBarrier::arrive: it
 * signals "my wgmma reads of this stage are done" (wgmma.wait_group came
 * first), which needs no cluster-scope fence of earlier generic accesses;
 * .release.cluster would add a MEMBAR to every k-tile. */
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t *bar, uint32_t cta) {
  asm volatile(
      "{\n.reg .b32 ra;\n"
      "mapa.shared::cluster.u32 ra, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(smem_u32(bar)),
      "r"(cta)
      : "memory");
}

/* ----------------------------------------------------------- clusters */
/* This CTA's rank in its cluster, the cluster's index in the grid (x) and
 * the number of clusters (x). Without a cluster launch: 0, blockIdx.x,
 * gridDim.x. */
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_id_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_count_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
  return r;
}
/* Barrier over every thread of every CTA of the cluster (release/acquire:
 * e.g. mbarrier inits become visible to the peer CTAs). All threads of each
 * warp execute it, none may have exited. */
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}

/* ---------------------------------------------------------------- TMA */
/* Pull the tensor map (a __grid_constant__ kernel parameter) into the
 * descriptor cache ahead of the first copy. */
__device__ __forceinline__ void prefetch_tensormap(const void *tmap) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tmap)) : "memory");
}
/* 2-D tile load global -> shared (box and swizzle from the tensor map),
 * completing `box bytes` of transactions on `bar`. c0 is the innermost
 * (contiguous) coordinate, in elements. dst is 128-byte aligned (1024 for
 * the 128B swizzle). */
__device__ __forceinline__ void tma_load_2d(void *dst, const void *tmap, uint64_t *bar,
                                            int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
      : "memory");
}

/* tma_load_2d to every CTA of the cluster whose bit is set in cta_mask:
 * the box lands at dst's shared-memory offset in each of them and completes
 * its bytes on the barrier at bar's offset in each of them. Each receiving
 * CTA's barrier must expect these bytes (its own arrive_expect_tx); the
 * sender may write a peer's stage only once the peer has released it. */
__device__ __forceinline__ void tma_load_2d_multicast(void *dst, const void *tmap, uint64_t *bar,
                                                      int32_t c0, int32_t c1, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(cta_mask)
      : "memory");
}
/* 2-D tile store shared -> global (box and swizzle from the tensor map),
 * tracked by this thread's bulk async-groups (close them with
 * bulk_commit_group, wait with bulk_wait_group[_read]). src is 128-byte
 * aligned (1024 for the 128B swizzle) and written in the tensor map's
 * (swizzled) box layout. The writes become visible to the generic proxy of
 * other threads only after bulk_wait_group (or at kernel end); the issuing
 * thread must make its CTA's generic smem writes visible to the async
 * proxy first (fence_proxy_async_smem by every writer, then a barrier). */
__device__ __forceinline__ void tma_store_2d(const void *tmap, const void *src, int32_t c0,
                                             int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<uint64_t>(tmap)),
      "r"(smem_u32(src)), "r"(c0), "r"(c1)
      : "memory");
}
/* Prefetch one box of a tensor map into L2 (no shared memory, no barrier,
 * no completion to wait for: a hint). */
__device__ __forceinline__ void tma_prefetch_l2_2d(const void *tmap, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\n" ::"l"(
                   reinterpret_cast<uint64_t>(tmap)),
               "r"(c0), "r"(c1)
               : "memory");
}
/* Close this thread's bulk copies (TMA stores) issued since the last commit
 * into one bulk async-group. */
__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
/* Wait until at most N of this thread's bulk async-groups are pending:
 * _read: they have finished reading their shared-memory source (which may
 * then be overwritten); plain: they have completed (writes performed). */
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  static_assert(N >= 0 && N <= 63, "cp.async.bulk.wait_group range");
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
  static_assert(N >= 0 && N <= 63, "cp.async.bulk.wait_group range");
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

/* ----------------------------------------------------------- stmatrix */
/* Two floats rounded (RN) to bf16 and packed: lo in bits 0-15, hi in 16-31
 * (the order of a b16 pair in an mma/stmatrix fragment register). */
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t r;
  /* cvt's first source goes to the upper half. */
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
/* Warp-collective store of four 8x8 b16 matrices, transposed. Register i of
 * every lane holds matrix i's fragment: lane l has row l/4, columns
 * 2*(l%4) and 2*(l%4)+1 (low half first); this is the wgmma/mma
 * accumulator layout. With .trans, column j of matrix i goes to the 16 bytes
 * at the address given by lane 8*i + j (its rows 0..7 in order). So a
 * register fragment whose rows are M and columns N lands N-major in shared
 * memory with M contiguous: 16-byte runs of 8 consecutive rows. Addresses
 * are shared-space, 16-byte aligned; all 32 lanes execute it. */
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1,
                                                  uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

/* -------------------------------------------------------------- wgmma */
/* Before the first wgmma of a batch, and whenever the accumulator registers
 * were touched by other instructions since the last wgmma. */
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
/* Close the wgmmas issued since the last commit into one group. */
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/* Wait until at most N committed groups are still in flight. Their
 * accumulators are then readable and their shared-memory operands free. */
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group range");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* Keep the compiler from moving accumulator accesses across a wgmma batch. */
template <int N>
__device__ __forceinline__ void wgmma_reg_fence(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/* The accumulator operands of an FP32 wgmma, written once: the register
 * list (%0 on) and the "+f" constraints on d[], for 64 floats a thread
 * (m64n128) and 128 (m64n256). The instruction's other operands are
 * numbered after them. */
#define GS_WGMMA_D64_TEXT \
  "%0, %1, %2, %3, %4, %5, %6, %7, " \
  "%8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, " \
  "%40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, " \
  "%56, %57, %58, %59, %60, %61, %62, %63"
#define GS_WGMMA_D128_TEXT \
  GS_WGMMA_D64_TEXT ", " \
  "%64, %65, %66, %67, %68, %69, %70, %71, " \
  "%72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, " \
  "%88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, " \
  "%104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, " \
  "%120, %121, %122, %123, %124, %125, %126, %127"
#define GS_WGMMA_D64(d) \
  "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), \
  "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]), \
  "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), \
  "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]), \
  "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), \
  "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]), \
  "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), \
  "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]), \
  "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), \
  "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]), \
  "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), \
  "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]), \
  "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), \
  "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]), \
  "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), \
  "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63])
#define GS_WGMMA_D128(d) \
  GS_WGMMA_D64(d), \
  "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), \
  "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71]), \
  "+f"((d)[72]), "+f"((d)[73]), "+f"((d)[74]), "+f"((d)[75]), \
  "+f"((d)[76]), "+f"((d)[77]), "+f"((d)[78]), "+f"((d)[79]), \
  "+f"((d)[80]), "+f"((d)[81]), "+f"((d)[82]), "+f"((d)[83]), \
  "+f"((d)[84]), "+f"((d)[85]), "+f"((d)[86]), "+f"((d)[87]), \
  "+f"((d)[88]), "+f"((d)[89]), "+f"((d)[90]), "+f"((d)[91]), \
  "+f"((d)[92]), "+f"((d)[93]), "+f"((d)[94]), "+f"((d)[95]), \
  "+f"((d)[96]), "+f"((d)[97]), "+f"((d)[98]), "+f"((d)[99]), \
  "+f"((d)[100]), "+f"((d)[101]), "+f"((d)[102]), "+f"((d)[103]), \
  "+f"((d)[104]), "+f"((d)[105]), "+f"((d)[106]), "+f"((d)[107]), \
  "+f"((d)[108]), "+f"((d)[109]), "+f"((d)[110]), "+f"((d)[111]), \
  "+f"((d)[112]), "+f"((d)[113]), "+f"((d)[114]), "+f"((d)[115]), \
  "+f"((d)[116]), "+f"((d)[117]), "+f"((d)[118]), "+f"((d)[119]), \
  "+f"((d)[120]), "+f"((d)[121]), "+f"((d)[122]), "+f"((d)[123]), \
  "+f"((d)[124]), "+f"((d)[125]), "+f"((d)[126]), "+f"((d)[127])

/* Shared-memory matrix descriptor for a K-major operand written by TMA with
 * CU_TENSOR_MAP_SWIZZLE_128B: rows of 128 bytes (64 bf16 / 32 tf32 of K),
 * 8-row core-matrix groups 1024 bytes apart, the tile 1024-byte aligned.
 *   bits  0-13  start address >> 4
 *   bits 16-29  leading byte offset >> 4 (unused for swizzled K-major: 1)
 *   bits 32-45  stride byte offset >> 4 (8 rows x 128 B = 1024 -> 64)
 *   bits 49-51  base offset (0: tile 1024-aligned)
 *   bits 62-63  layout: 1 = 128-byte swizzle
 * The k-th 32-byte K slice inside the 128-byte row is addressed by adding
 * 32*k bytes (2*k in descriptor units) to the start address: the hardware
 * applies the swizzle to the final address bits, as TMA did. */
__device__ __forceinline__ uint64_t smem_desc_sw128_kmajor(const void *tile) {
  const uint64_t addr = smem_u32(tile);
  uint64_t d = 0;
  d |= (addr & 0x3FFFFull) >> 4;
  d |= (uint64_t)1 << 16;
  d |= (uint64_t)(1024 >> 4) << 32;
  d |= (uint64_t)1 << 62;
  return d;
}
/* Descriptor advanced by `bytes` along K inside the swizzle atom. */
__device__ __forceinline__ uint64_t smem_desc_advance(uint64_t desc, uint32_t bytes) {
  return desc + (uint64_t)(bytes >> 4);
}

/* wgmma m64n128k16, BF16 x BF16 -> FP32, A and B from shared memory (both
 * K-major, no transpose); d (64 floats per thread) += A * B when scale_d,
 * d = A * B otherwise. */
__device__ __forceinline__ void wgmma_m64n128k16_bf16(float (&d)[64], uint64_t desc_a,
                                                    uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      GS_WGMMA_D64_TEXT
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : GS_WGMMA_D64(d)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/* wgmma m64n128k16, BF16 x BF16 -> FP32, A from registers (4 x .b32, 8
 * BF16 per thread: registers 0/1 rows g / g + 8 at k 2tq, 2tq + 1,
 * registers 2/3 the same at k 2tq + 8, + 9, low half first), B K-major
 * from shared memory through a descriptor; d += A * B when scale_d. The
 * A registers are read asynchronously (see the TF32 section below). */
__device__ __forceinline__ void wgmma_m64n128k16_bf16_rs(float (&d)[64], const uint32_t (&a)[4],
                                                        uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      GS_WGMMA_D64_TEXT
      "}, {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
      : GS_WGMMA_D64(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

/* wgmma m64n256k16, BF16 x BF16 -> FP32, A and B from shared memory;
 * d (128 floats per thread) += A * B when scale_d, d = A * B otherwise.
 * The transpose immediates (16-bit types only): TA = 1 reads A M-major,
 * TB = 1 reads B N-major; 0 reads them K-major. */
template <int TA, int TB>
__device__ __forceinline__ void wgmma_m64n256k16_bf16_t(float (&d)[128], uint64_t desc_a,
                                                    uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      GS_WGMMA_D128_TEXT
      "}, %128, %129, p, 1, 1, %131, %132;\n}\n"
      : GS_WGMMA_D128(d)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TA), "n"(TB));
}

/* Both operands K-major (the TN layout). */
__device__ __forceinline__ void wgmma_m64n256k16_bf16(float (&d)[128], uint64_t desc_a,
                                                    uint64_t desc_b, int scale_d) {
  wgmma_m64n256k16_bf16_t<0, 0>(d, desc_a, desc_b, scale_d);
}


}  // namespace gs_sm90

#endif

/* ==================================================================== */
/* TF32 wgmma (section added for kernels/gemm_f32_3xtf32.cu, the 3xTF32
 * FP32 GEMM; kept apart from the helpers above, which it only uses).
 *
 *   wgmma_m64n128k8_tf32_rs   D (64 FP32 per thread) += A (registers,
 *                             4 x .b32 TF32 per thread) * B (shared memory,
 *                             K-major, through a matrix descriptor)
 *
 * TF32 wgmma reads both operands K-major (the PTX ISA allows no transpose
 * for .tf32) and does K = 8 per instruction: 32 bytes of each K-major row,
 * so inside a 128-byte swizzle row (32 FP32 of K) the k-th slice is the
 * descriptor advanced by 32*k bytes, as for BF16 k16 (smem_desc_sw128_kmajor
 * and smem_desc_advance above work unchanged for 4-byte elements).
 *
 * Register fragment of A (PTX ISA, "Matrix Fragments for
 * wgmma.mma_async.m64nNk8"): warp w of the warpgroup holds rows 16w..16w+15;
 * lane l, with g = l / 4 and t = l % 4, holds
 *   a0 = A[16w + g    ][t]      a1 = A[16w + g + 8][t]
 *   a2 = A[16w + g    ][t + 4]  a3 = A[16w + g + 8][t + 4]
 * The tensor core reads the top 19 bits of each 32-bit word (sign, 8-bit
 * exponent, 10-bit mantissa); the 3xTF32 kernel passes words whose low 13
 * bits are already zero. The accumulator D has the layout of every
 * m64nN FP32 wgmma (value v of lane l in warp w: row 16w + l/4 +
 * 8*((v/2)%2), column 8*(v/4) + 2*(l%4) + v%2).
 *
 * The registers of A are read asynchronously: they must not be written
 * until a wgmma_wait shows the instruction's group complete (ptxas keeps
 * them allocated until then, or serializes the wgmmas and says so with
 * -Xptxas -v), and a wgmma_fence must separate their last ordinary write
 * from the wgmma that reads them. */
#ifndef GS_SM90_PTX_TF32_SECTION
#define GS_SM90_PTX_TF32_SECTION
namespace gs_sm90 {

/* wgmma m64n128k8, TF32 x TF32 -> FP32, A from registers, B from shared
 * memory (K-major); d += A * B when scale_d, d = A * B otherwise. */
__device__ __forceinline__ void wgmma_m64n128k8_tf32_rs(float (&d)[64], const uint32_t (&a)[4],
                                                       uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
      GS_WGMMA_D64_TEXT
      "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : GS_WGMMA_D64(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

}  // namespace gs_sm90
#endif /* GS_SM90_PTX_TF32_SECTION */
