/* Splitting an FP32 value into three BF16 parts, for FP32 GEMM on the BF16
 * tensor cores (BF16x9: a*b = sum over i, j of a_i * b_j; BF16x6 keeps the
 * six with i + j <= 2). Host and device code share these functions, so the
 * CPU tests and the CPU emulation check exactly what a kernel does.
 *
 *   hi  = x rounded to nearest BF16 (ties to even, as cvt.rn.bf16.f32);
 *         where that would overflow (|x| near FLT_MAX) x is truncated
 *         instead, so hi is finite for finite x.
 *   mid = (x - hi) rounded to nearest BF16. x - hi is exact in FP32.
 *   lo  = (x - hi - mid) as BF16. x - hi - mid is exact in FP32 and has at
 *         most 8 significant bits, so lo holds it exactly whenever its bits
 *         lie at or above 2^-133 (BF16's smallest subnormal): for
 *         |x| >= 2^-110. Then hi + mid + lo == x exactly.
 *   cross = hi for finite x, 0 for Inf/NaN (whose mid and lo are 0 too):
 *         what hi contributes to the products with the other operand's
 *         lower parts, so that an Inf never meets a 0 there; a non-finite
 *         value reaches the result through hi * hi alone (SGEMM's pattern).
 * A NaN keeps a NaN hi: its payload may lie only in the 16 bits that BF16
 * drops, so hi gets the quiet bit (else it would read as Inf).
 *
 * Magnitudes: |mid| <= 2^-8 |x| and |lo| <= 2^-16 |x| (round to nearest),
 * up to 2^-7 and 2^-15 after the overflow truncation. */
#ifndef GS_BF16X3_SPLIT_H
#define GS_BF16X3_SPLIT_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define GS_BF16X3_FN __host__ __device__ __forceinline__
#else
#define GS_BF16X3_FN static inline
#endif

/* Below this magnitude (2^-110) the lo part may lose bits. */
#define GS_BF16X3_EXACT_MIN 0x08800000u

typedef struct gs_bf16x3 {
  uint16_t hi, mid, lo, cross; /* BF16 bit patterns */
} gs_bf16x3;

GS_BF16X3_FN uint32_t gs_bf16x3_bits(float x)
{
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

GS_BF16X3_FN float gs_bf16x3_float(uint32_t u)
{
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* The FP32 value of a BF16 bit pattern. */
GS_BF16X3_FN float gs_bf16_value(uint16_t h)
{
  return gs_bf16x3_float((uint32_t)h << 16);
}

/* Finite FP32 x rounded to nearest BF16, ties to even; truncated where
 * rounding up would reach Inf. */
GS_BF16X3_FN uint16_t gs_bf16_round(float x)
{
  const uint32_t u = gs_bf16x3_bits(x);
  const uint32_t r = u + 0x7fffu + ((u >> 16) & 1u);
  if ((r & 0x7f800000u) == 0x7f800000u) return (uint16_t)(u >> 16);
  return (uint16_t)(r >> 16);
}

GS_BF16X3_FN gs_bf16x3 gs_bf16x3_split(float x)
{
  gs_bf16x3 p;
  const uint32_t u = gs_bf16x3_bits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) {
    p.hi = (uint16_t)(u >> 16);
    if (u & 0x007fffffu) p.hi |= 0x0040u; /* a NaN stays a NaN */
    p.mid = p.lo = p.cross = 0;
    return p;
  }
  p.hi = gs_bf16_round(x);
  const float r1 = x - gs_bf16_value(p.hi);
  p.mid = gs_bf16_round(r1);
  const float r2 = r1 - gs_bf16_value(p.mid);
  p.lo = gs_bf16_round(r2);
  p.cross = p.hi;
  return p;
}

#endif
