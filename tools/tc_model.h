/* A model of the tensor core's FP32 accumulation (host C), shared by the
 * CPU emulation (tools/f32-emu.c) and the probe that fits it on the device
 * (dev/tc_probe/probe.cu), and the random data both draw.
 *
 * One instruction's products are exact. A block of `block` products (the
 * instruction's K split into K / block blocks, in order) and the
 * accumulator are aligned to the largest term's leading bit; every term is
 * truncated toward zero below `prec` bits from there; the terms are summed
 * exactly; the sum is rounded to FP32, toward zero (round_nearest 0) or to
 * nearest even (1). With acc_apart the accumulator takes no part in the
 * alignment: the products' block sum is formed as above (from 0) and then
 * added to the accumulator with one more rounding of the same kind.
 * ftz, a mask of where subnormals are flushed to zero (keeping the sign):
 * GS_TC_FTZ_IN the inputs, GS_TC_FTZ_ACC the accumulator as it enters a
 * block, GS_TC_FTZ_OUT the rounded block sum; 0 keeps them all.
 * (Fasi, Higham, Mikaitis and Pranesh; Khattak and Mikaitis describe the
 * model family; the parameters here are fitted by the probe.) */
#ifndef GS_TC_MODEL_H
#define GS_TC_MODEL_H

#include <math.h>
#include <stdint.h>

typedef struct gs_tc_model {
  int prec, block, round_nearest, acc_apart, ftz;
} gs_tc_model;

enum { GS_TC_FTZ_IN = 1, GS_TC_FTZ_ACC = 2, GS_TC_FTZ_OUT = 4 };

/* x, or a zero of its sign where it is subnormal and flush is set. */
static inline float gs_tc_flush(float x, int flush)
{
  return flush && x != 0.0f && fabsf(x) < 0x1p-126f ? copysignf(0.0f, x) : x;
}

/* s (exact, in double) rounded to FP32 by the model's rounding. */
static inline float gs_tc_round(const gs_tc_model *m, double s)
{
  float f = (float)s; /* to nearest even */
  if (!m->round_nearest && fabs((double)f) > fabs(s)) f = nextafterf(f, 0.0f);
  return f;
}

static inline float gs_tc_block_sum(const gs_tc_model *m, float acc, const double *p, int n)
{
  acc = gs_tc_flush(acc, m->ftz & GS_TC_FTZ_ACC);
  int emax = -100000, e;
  if (acc != 0.0f) {
    frexp(acc, &e);
    emax = e;
  }
  for (int i = 0; i < n; i++)
    if (p[i] != 0.0) {
      frexp(p[i], &e);
      if (e > emax) emax = e;
    }
  if (emax == -100000) return acc;
  const double q = ldexp(1.0, emax - m->prec);
  double s = trunc((double)acc / q) * q;
  for (int i = 0; i < n; i++) s += trunc(p[i] / q) * q;
  return gs_tc_flush(gs_tc_round(m, s), m->ftz & GS_TC_FTZ_OUT);
}

/* acc + p[0] + ... + p[n-1] for one block. */
static inline float gs_tc_block(const gs_tc_model *m, float acc, const double *p, int n)
{
  if (!m->acc_apart) return gs_tc_block_sum(m, acc, p, n);
  const float s = gs_tc_block_sum(m, 0.0f, p, n);
  acc = gs_tc_flush(acc, m->ftz & GS_TC_FTZ_ACC);
  return gs_tc_flush(gs_tc_round(m, (double)acc + (double)s), m->ftz & GS_TC_FTZ_OUT);
}

/* One instruction's contribution to one accumulator element: len products
 * x[i] * y[i] (len <= 64) in blocks of m->block. */
static inline float gs_tc_mma(const gs_tc_model *m, float acc, const float *x, const float *y,
                              int len)
{
  double p[64];
  for (int i0 = 0; i0 < len; i0 += m->block) {
    const int n = len - i0 < m->block ? len - i0 : m->block;
    for (int i = 0; i < n; i++)
      p[i] = (double)gs_tc_flush(x[i0 + i], m->ftz & GS_TC_FTZ_IN) *
             (double)gs_tc_flush(y[i0 + i], m->ftz & GS_TC_FTZ_IN);
    acc = gs_tc_block(m, acc, p, n);
  }
  return acc;
}

/* The random data of the emulation and the probe: splitmix64 and
 * Box-Muller normals. */
static inline uint64_t gs_rng_next(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline double gs_rng_u01(uint64_t *s) { return (double)(gs_rng_next(s) >> 11) * 0x1p-53; }
static inline double gs_rng_normal(uint64_t *s)
{
  const double u = gs_rng_u01(s), v = gs_rng_u01(s);
  return sqrt(-2.0 * log(u > 0 ? u : 0x1p-60)) * cos(6.283185307179586 * v);
}

#endif
