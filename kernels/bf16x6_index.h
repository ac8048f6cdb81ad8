/* bf16x6_index.h: the index math of the BF16x6 kernels (kernels/
 * gemm_f32_bf16x6_device.cuh and the lab, dev/bf16x6/bf16x6.cu), host+device,
 * so that dev/bf16x6/index_test.c checks exactly what the kernel computes
 * (against a model of TMA's 128-byte swizzle and of how wgmma reads a
 * K-major operand through a descriptor and A from registers).
 *
 * A K-step is 32 FP32 of K: one 128-byte row of a raw TMA tile, whose
 * 16-byte chunk c lies at chunk c ^ (row & 7). It is two k16 substeps j.
 * Index i (0..15) of substep j stands for raw k bf16x6_raw_k(i, j). */
#ifndef GS_BF16X6_INDEX_H
#define GS_BF16X6_INDEX_H

#if defined(__CUDACC__)
#define BX_FN __host__ __device__ __forceinline__
#else
#define BX_FN static inline
#endif

/* raw k of index i of substep j: the lane with tq = (i & 7) >> 1 holds
 * raw k 8 tq + 4 j .. + 3, one 16-byte chunk (2 tq + j) of the row. */
BX_FN int bf16x6_raw_k(int i, int j) { return 8 * ((i & 7) >> 1) + 4 * j + (i & 1) + 2 * (i >> 3); }

/* The raw chunk (of 8) holding a consumer's A values of substep j, lane
 * quad tq; elements 0, 1 go to fragment registers 0 / 1 (rows g, g + 8),
 * elements 2, 3 to registers 2 / 3. */
BX_FN int bf16x6_a_chunk(int tq, int j) { return 2 * tq + j; }

/* The raw chunk a split thread reads as input e (0..3) of substep j; its
 * elements 2 half, 2 half + 1 are output word e of chunk (j, half). */
BX_FN int bf16x6_b_chunk(int e, int j) { return 2 * e + j; }

/* Byte offset, in a part tile (128 rows of 128 bytes, 1024-byte aligned),
 * of the 16-byte chunk that holds indices 8 half .. 8 half + 7 of substep
 * j of a K-step in half h of the row, for B row n. */
BX_FN int bf16x6_part_chunk_offset(int n, int h, int j, int half) {
  return n * 128 + (((4 * h + 2 * j + half) ^ (n & 7)) << 4);
}

/* Bytes the wgmma descriptor of a part tile is advanced by for substep j
 * of a K-step in half h. */
BX_FN int bf16x6_desc_offset(int h, int j) { return 64 * h + 32 * j; }

/* Pre-split B (the pre-pass writes B's parts in this order, TMA loads them
 * with the 128-byte swizzle): element e (0..63) of each 64 of a part's
 * row holds the part of raw k bf16x6_presplit_raw(e) of those 64, i.e.
 * index e & 15 of substep (e >> 4) & 1 of the K-step e >> 5. Odd e is
 * the even one's raw k + 1 (the pre-pass reads a float2). */
BX_FN int bf16x6_presplit_raw(int e) { return 32 * (e >> 5) + bf16x6_raw_k(e & 15, (e >> 4) & 1); }

#endif
