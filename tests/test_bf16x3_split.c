/* kernels/bf16x3_split.h over every one of the 2^32 FP32 inputs:
 *   hi is the BF16 nearest x (ties to even; found here by comparing the two
 *     neighbouring BF16 values in double), or x truncated where that nearest
 *     value would be Inf; hi is finite for finite x;
 *   mid is the BF16 nearest x - hi; |mid| <= 2^-8 |x|, |lo| <= 2^-16 |x|
 *     (2^-7, 2^-15 where hi was truncated);
 *   hi + mid + lo == x exactly for |x| >= 2^-110 (GS_BF16X3_EXACT_MIN), and
 *     within 2^-134 below;
 *   cross == hi for finite x;
 *   Inf keeps its sign in hi, a NaN stays a NaN, and mid, lo, cross are 0.
 * Two threads split the range; ~30 s. Exit 0 when all hold. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../kernels/bf16x3_split.h"

typedef struct share {
  uint64_t first, last;
  uint64_t round_bad, part_bad, exact_bad, near_bad, cross_bad, nonfinite_bad;
  uint32_t first_bad; /* an input that failed, for the message */
  int any_bad;
} share;

static double bf16d(uint16_t h) { return (double)gs_bf16_value(h); }

/* The BF16 nearest x (finite), ties to even, from the two neighbours. */
static uint16_t nearest(float x, int *overflow)
{
  const uint32_t u = gs_bf16x3_bits(x);
  const uint16_t down = (uint16_t)(u >> 16); /* toward zero */
  const uint16_t up = (uint16_t)(down + 1);  /* away from zero */
  const double dx = fabs((double)x);
  const double dd = fabs(bf16d(down));
  /* past the largest BF16 the next value would be 2^128 (IEEE rounding
   * to nearest goes to Inf from halfway there) */
  const int up_inf = up == 0x7f80u || up == 0xff80u;
  const double du = up_inf ? 0x1p128 : fabs(bf16d(up));
  *overflow = 0;
  if (dx - dd < du - dx) return down;
  if (dx - dd > du - dx) return up_inf ? (*overflow = 1, down) : up;
  /* a tie: the even one */
  const uint16_t even = (down & 1u) ? up : down;
  if (even == up && up_inf) *overflow = 1;
  return *overflow ? down : even;
}

static void note(share *s, uint32_t u)
{
  if (!s->any_bad) s->first_bad = u, s->any_bad = 1;
}

static void *check(void *arg)
{
  share *s = arg;
  for (uint64_t i = s->first; i < s->last; ++i) {
    const uint32_t u = (uint32_t)i;
    const float x = gs_bf16x3_float(u);
    const gs_bf16x3 p = gs_bf16x3_split(x);
    if ((u & 0x7f800000u) == 0x7f800000u) {
      const int nan = (u & 0x007fffffu) != 0;
      const float h = gs_bf16_value(p.hi);
      const int ok = (nan ? isnan(h) : (h == x)) && p.mid == 0 && p.lo == 0 && p.cross == 0;
      if (!ok) s->nonfinite_bad++, note(s, u);
      continue;
    }
    int overflow;
    const uint16_t want = nearest(x, &overflow);
    if (p.hi != want || !isfinite(gs_bf16_value(p.hi))) s->round_bad++, note(s, u);
    const double ax = fabs((double)x);
    /* 2^-8 and 2^-16 when hi was rounded, 2^-7 and 2^-15 after the
     * overflow truncation */
    const int e = overflow ? 7 : 8;
    if (fabs(bf16d(p.mid)) > ldexp(ax, -e) || fabs(bf16d(p.lo)) > ldexp(ax, -2 * e))
      s->part_bad++, note(s, u);
    /* mid is the BF16 nearest x - hi (exact in FP32) */
    int mid_overflow;
    if (p.mid != nearest(x - gs_bf16_value(p.hi), &mid_overflow)) s->part_bad++, note(s, u);
    const double sum = bf16d(p.hi) + bf16d(p.mid) + bf16d(p.lo); /* exact in double */
    if ((u & 0x7fffffffu) >= GS_BF16X3_EXACT_MIN) {
      if (sum != (double)x) s->exact_bad++, note(s, u);
    } else if (fabs(sum - (double)x) > 0x1p-134) {
      s->near_bad++, note(s, u);
    }
    if (p.cross != p.hi) s->cross_bad++, note(s, u);
  }
  return NULL;
}

int main(void)
{
  enum { T = 2 };
  share sh[T];
  pthread_t th[T];
  const uint64_t n = (uint64_t)1 << 32;
  for (int t = 0; t < T; t++) {
    memset(&sh[t], 0, sizeof sh[t]);
    sh[t].first = n / T * t;
    sh[t].last = t == T - 1 ? n : n / T * (t + 1);
    if (pthread_create(&th[t], NULL, check, &sh[t])) {
      fprintf(stderr, "test_bf16x3_split: pthread_create failed\n");
      return 1;
    }
  }
  share all;
  memset(&all, 0, sizeof all);
  for (int t = 0; t < T; t++) {
    pthread_join(th[t], NULL);
    all.round_bad += sh[t].round_bad;
    all.part_bad += sh[t].part_bad;
    all.exact_bad += sh[t].exact_bad;
    all.near_bad += sh[t].near_bad;
    all.cross_bad += sh[t].cross_bad;
    all.nonfinite_bad += sh[t].nonfinite_bad;
    if (sh[t].any_bad && !all.any_bad) all.first_bad = sh[t].first_bad, all.any_bad = 1;
  }
  printf("test_bf16x3_split: hi rounding %llu bad, mid rounding and part bounds %llu, exact sum %llu, "
         "sum below 2^-110 %llu, cross %llu, non-finite %llu\n",
         (unsigned long long)all.round_bad, (unsigned long long)all.part_bad,
         (unsigned long long)all.exact_bad, (unsigned long long)all.near_bad,
         (unsigned long long)all.cross_bad, (unsigned long long)all.nonfinite_bad);
  if (all.any_bad) {
    printf("test_bf16x3_split: FAIL, e.g. input 0x%08x\n", all.first_bad);
    return 1;
  }
  printf("test_bf16x3_split: all 2^32 inputs pass\n");
  return 0;
}
