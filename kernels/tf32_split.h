/* Splitting an FP32 value into TF32 parts, for FP32 GEMM on tensor cores
 * (3xTF32: a*b ~ big_a*big_b + big_a*small_b + small_a*big_b). Host and
 * device code share these functions, so the CPU tests check exactly what
 * the kernel does.
 *
 * big   = x rounded to nearest TF32 (10 explicit mantissa bits); where that
 *         would overflow (|x| near FLT_MAX) x is truncated instead, so big
 *         is always finite for finite x.
 * small = (x - big) rounded to nearest TF32. x - big is exact in FP32, and
 *         big + small is within 2^-22 |x| of x (2^-21 after truncation).
 * cross = the value big contributes to the cross terms: big itself for
 *         finite x, 0 for Inf/NaN, whose small part is 0 too, so that no
 *         Inf * 0 turns into a NaN where FP32 SGEMM gives Inf: the
 *         non-finite value reaches the result through big * big alone.
 * Tensor cores read a TF32 operand from the top 19 bits of an FP32 word and
 * ignore the low 13; every part here has them zero. Consequence: no part
 * holds bits below 2^-136, so for |x| below about 2^-113 (subnormals and
 * values near FLT_MIN) the split is only as precise as TF32 alone. */
#ifndef GS_TF32_SPLIT_H
#define GS_TF32_SPLIT_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define GS_TF32_FN __host__ __device__ __forceinline__
#else
#define GS_TF32_FN static inline
#endif

#define GS_TF32_DROP_BITS 13
#define GS_TF32_LOW_MASK ((1u << GS_TF32_DROP_BITS) - 1u)

typedef struct gs_tf32_parts {
  float big, small, cross;
} gs_tf32_parts;

GS_TF32_FN uint32_t gs_tf32_bits(float x)
{
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

GS_TF32_FN float gs_tf32_float(uint32_t u)
{
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

GS_TF32_FN int gs_tf32_finite(uint32_t u)
{
  return (u & 0x7f800000u) != 0x7f800000u;
}

/* Round a finite FP32 value to nearest TF32 (ties away from zero, as the
 * PTX cvt.rna.tf32.f32); truncate where rounding up would reach Inf. */
GS_TF32_FN float gs_tf32_round(float x)
{
  uint32_t u = gs_tf32_bits(x);
  uint32_t r = (u + (1u << (GS_TF32_DROP_BITS - 1))) & ~GS_TF32_LOW_MASK;
  if (!gs_tf32_finite(r)) r = u & ~GS_TF32_LOW_MASK;
  return gs_tf32_float(r);
}

GS_TF32_FN gs_tf32_parts gs_tf32_split(float x)
{
  gs_tf32_parts p;
  if (!gs_tf32_finite(gs_tf32_bits(x))) {
    p.big = x;
    p.small = 0.0f;
    p.cross = 0.0f;
    return p;
  }
  p.big = gs_tf32_round(x);
  p.small = gs_tf32_round(x - p.big);
  p.cross = p.big;
  return p;
}

#endif
