/* The parts of gemm_f32_3xtf32.cu that are host+device code: the TF32 split
 * and the layouts' index math. The kernel includes them; so do the CPU
 * tests (tests/test_3xtf32_split, tests/test_3xtf32_layouts), which check
 * them as they are. Include after tf32_split.h and sm90_ptx.cuh (CUDA) or
 * with __host__/__device__ defined away (host C++). GS_3XTF32_TRACE(p,
 * store) is called at every 16-byte shared-memory access in host builds
 * (the layout test traces them for its bank check). */
#ifndef GS_GEMM_F32_3XTF32_PARTS_H
#define GS_GEMM_F32_3XTF32_PARTS_H

#include <math.h>
#include <stdint.h>
#include <vector_types.h> /* float4, uint4 */

#include <type_traits>

#ifndef GS_3XTF32_TRACE
#define GS_3XTF32_TRACE(p, store) ((void)0)
#endif

namespace gs_f32_3xtf32 {

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
 * clamp. Equal to gs_tf32_split (+ the NaN rule) for all 2^32 inputs:
 * tests/test_3xtf32_split checks it. */
struct Words {
  uint32_t big, small, cross;
};
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

/* The fast form of split_words for a "tame" value: |x| < 0x7f7ff000 (finite,
 * and its TF32 rounding does not reach Inf). Then the rounding needs no
 * clamp, no sign handling (the carry never reaches the sign bit) and no
 * NaN rule, and cross == big: 5 instructions instead of ~14. Equal to
 * split_words for every tame input (tests/test_3xtf32_split checks all of
 * them). */
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

/* max(m, |x|), NaN if either is NaN (max.NaN): a running "is everything
 * tame" test at one FMNMX a value; tame(m) is false for NaN and Inf. */
__device__ __forceinline__ float max_abs_nan(float m, float x) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(m), "f"(fabsf(x)));
  return r;
}
/* ---------------------------------------------- layouts TN, NN, NT, TT
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
 * These functions are host+device: tests/test_3xtf32_layouts compiles them
 * as they are against a model of TMA, the swizzle and wgmma (results, and
 * the bank groups of the split's 16-byte accesses). */
enum Layout { LAY_TN = 0, LAY_NN = 1, LAY_NT = 2, LAY_TT = 3 };

/* Per-layout choices, each measured layout by layout (the kernel's doc):
 * masks of 1 << LAY_*. */
constexpr unsigned kSpeculativeSplit = 1u << LAY_NT; /* B split before its tame test */
constexpr unsigned kTmaSpread = 1u << LAY_NT;        /* each split warp issues its own boxes */
constexpr unsigned kConsumerTree = 1u << LAY_TN;     /* consumers test A with a max tree */
template <int LAY>
struct Lay {
  static constexpr bool A_MN = LAY == LAY_NN || LAY == LAY_NT; /* A stored m x k */
  static constexpr bool B_NM = LAY == LAY_NT || LAY == LAY_TT; /* B stored n x k */
  static constexpr int PERM = A_MN ? 1 : 0;                    /* K permutation */
  /* B split by split_nm (LDS.128 of four n) rather than split_row_lay:
   * TT (measured slower in NT, the kernel's doc). */
  static constexpr bool SPLIT_NM = LAY == LAY_TT;
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
/* The split of one B row (NN, NT: both PERM 1) in two passes p of four
 * stored 16-byte chunks (chunk c, element e: stored column 4c + e = K index
 * 4(c%2) + e of substep c/2). Pass p writes chunks split_chunk(p, cc),
 * cc = 0..3; element e of chunk split_chunk(p, cc) is raw k =
 * split_kbase(p) + split_klocal(cc, e) (register indices independent of p:
 * the pass loop stays rolled). */
__host__ __device__ __forceinline__ int split_chunk(int p, int cc) { return 4 * p + cc; }
__host__ __device__ __forceinline__ int split_kbase(int p) { return 16 * p; }
__host__ __device__ __forceinline__ int split_klocal(int cc, int e) {
  return 8 * (cc >> 1) + 2 * e + (cc & 1);
}
__host__ __device__ __forceinline__ float4 ld4(const float *p) {
#ifndef __CUDA_ARCH__
  GS_3XTF32_TRACE(p, 0);
#endif
  return *reinterpret_cast<const float4 *>(p);
}
/* One 16-byte shared store. On the device it is written as st.shared.v4:
 * from a plain uint4 store the compiler emitted four 4-byte stores where it
 * could not prove the address 16-byte aligned (the split's first row
 * chunk), and those were 4-way bank conflicts (seen with ncu). */
__host__ __device__ __forceinline__ void st4(float *p, uint4 v) {
#ifdef __CUDA_ARCH__
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(gs_sm90::smem_u32(p)), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
#else
  GS_3XTF32_TRACE(p, 1);
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
 * 128-byte swizzle, permuted for PERM 1. Returns 1 if the row held a value
 * that is not tame (then it was split exactly, with split_words). */
template <int LAY>
__host__ __device__ __forceinline__ uint32_t split_row_lay(const float *raw, float *bgo,
                                                           float *smo, int n) {
  constexpr bool SPEC = (kSpeculativeSplit >> LAY) & 1;
  static_assert(LAY == LAY_NN || LAY == LAY_NT, "split_row_lay serves NN and NT (PERM 1)");
  uint32_t wild = 0;
#pragma unroll 1
  for (int p = 0; p < 2; ++p) {
    const int kb = split_kbase(p);
    float r[4][4]; /* [cc][e] */
    if (Lay<LAY>::B_NM) {
#pragma unroll
      for (int cc = 0; cc < 4; ++cc)
#pragma unroll
        for (int e = 0; e < 4; ++e) r[cc][e] = raw[mn_off(n, kb + split_klocal(cc, e))];
    } else {
      /* PERM 1, pass p: raw k 16p .. 16p + 15, four raw chunks of row n */
      float4 v[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) v[i] = ld4(raw + sw128(n, kb + 4 * i));
#pragma unroll
      for (int cc = 0; cc < 4; ++cc)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int kl = split_klocal(cc, e);
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
        const int c = split_chunk(p, cc);
        st4(bgo + sw128(n, 4 * c), vb);
        st4(smo + sw128(n, 4 * c), vs);
      }
    };
    if (split_tame_or_exact<SPEC>(r, emit)) wild = 1;
  }
  return wild;
}
/* Split thread t (0..127) of TT's N-major raw B tile into big (bgo) and
 * small (smo), K-major, 128-byte swizzle, permuted for PERM 0: the tiles a
 * row split would write, but each raw load is an LDS.128 of four
 * consecutive n at one k instead of one scalar. Warp w takes box w
 * (n = 32w .. 32w + 31); lane 8p + q takes rows n0 .. n0 + 3 (n0 = 32w +
 * 4q, one raw 16-byte chunk) and the eight raw k of wgmma substep
 * j = p ^ (q >> 2): the stored chunks 2j and 2j + 1 of its four rows, one
 * chunk per pass. Which of the two a pass takes is flipped by
 * b = (q >> 1) & 1. With this choice of (j, b) the eight lanes of each
 * quarter-warp touch eight different 16-byte bank groups in every load and
 * every store (found by an exhaustive search over such lane mappings;
 * tests/test_3xtf32_layouts checks it): no bank conflicts. Returns 1 if
 * the thread's values held one that is not tame (split exactly). */
__host__ __device__ __forceinline__ uint32_t split_nm(const float *raw, float *bgo, float *smo,
                                                      int t) {
  constexpr int PERM = Lay<LAY_TT>::PERM;
  constexpr bool SPEC = (kSpeculativeSplit >> LAY_TT) & 1;
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

}  // namespace gs_f32_3xtf32

#endif
