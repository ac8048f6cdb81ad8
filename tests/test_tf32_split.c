/* The TF32 split of kernels/tf32_split.h (the 3xTF32 FP32 GEMM's operand
 * preparation), and the accuracy of the scheme itself, emulated on the CPU:
 * three TF32 products per K-chunk, the chunks summed in FP32. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../kernels/tf32_split.h"

static uint64_t rng = 0x243f6a8885a308d3ull;
static double uniform(void)
{
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void)
{
  return sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform());
}

static int is_tf32(float x) { return (gs_tf32_bits(x) & GS_TF32_LOW_MASK) == 0; }

static void test_parts_are_tf32_and_close(void **s)
{
  (void)s;
  for (int i = 0; i < 200000; i++) {
    float x = (float)(normal() * exp(8.0 * normal()));
    gs_tf32_parts p = gs_tf32_split(x);
    assert_true(is_tf32(p.big));
    assert_true(is_tf32(p.small));
    assert_true(p.cross == p.big);
    /* x - big is exact in FP32, and what is left after small is tiny */
    assert_true((double)x - (double)p.big == (double)(x - p.big));
    double rest = fabs((double)x - (double)p.big - (double)p.small);
    assert_true(rest <= ldexp(fabs((double)x), -21) + ldexp(1.0, -149));
    assert_true(fabs((double)x - (double)p.big) <= ldexp(fabs((double)x), -11));
  }
}

static void test_rounds_to_nearest(void **s)
{
  (void)s;
  /* 1 + 2^-11 is halfway between TF32 neighbours 1 and 1 + 2^-10: away */
  assert_true(gs_tf32_round(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);
  assert_true(gs_tf32_round(1.0f + 0x1p-12f) == 1.0f);
  assert_true(gs_tf32_round(-1.0f - 0x1p-11f) == -1.0f - 0x1p-10f);
}

static void test_no_overflow_near_flt_max(void **s)
{
  (void)s;
  float xs[] = { FLT_MAX, -FLT_MAX, nextafterf(FLT_MAX, 0), 0x1.fffffep126f };
  for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
    gs_tf32_parts p = gs_tf32_split(xs[i]);
    assert_true(isfinite(p.big) && isfinite(p.small));
    assert_true(fabs((double)xs[i] - (double)p.big - (double)p.small) <=
                ldexp(fabs((double)xs[i]), -20));
  }
}

static void test_non_finite_stays_out_of_cross_terms(void **s)
{
  (void)s;
  float xs[] = { INFINITY, -INFINITY, NAN };
  for (size_t i = 0; i < 3; i++) {
    gs_tf32_parts p = gs_tf32_split(xs[i]);
    assert_true(p.small == 0.0f && p.cross == 0.0f);
    assert_true(isnan(xs[i]) ? isnan(p.big) : p.big == xs[i]);
  }
  /* Inf * (a value exact in TF32): SGEMM gives Inf, so must the 3 products */
  gs_tf32_parts a = gs_tf32_split(INFINITY), b = gs_tf32_split(2.0f);
  float prod = a.big * b.big + (a.cross * b.small + a.small * b.cross);
  assert_true(isinf(prod) && prod > 0);
}

/* Near and below FLT_MIN a TF32 part cannot hold bits below 2^-136 (13
 * bits above the smallest subnormal): the split is then only as good as
 * TF32 alone. The kernel's error there is to be measured and documented
 * (issue 6); this pins down the bound. */
static void test_tiny_values(void **s)
{
  (void)s;
  float xs[] = { FLT_MIN, 3.0f * FLT_MIN, 1.17e-37f, 1e-40f, -1e-44f, 0.0f, -0.0f };
  for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
    gs_tf32_parts p = gs_tf32_split(xs[i]);
    assert_true(is_tf32(p.big) && is_tf32(p.small));
    assert_true(fabs((double)xs[i] - (double)p.big - (double)p.small) <=
                ldexp(fabs((double)xs[i]), -21) + ldexp(1.0, -137));
  }
  /* from 2^-113 up, the floor no longer matters: full 3xTF32 precision */
  float x = 0x1.234567p-110f;
  gs_tf32_parts p = gs_tf32_split(x);
  assert_true(fabs((double)x - (double)p.big - (double)p.small) <= ldexp(fabs((double)x), -21));
}

/* Relative Frobenius errors against FP64 of (a) plain FP32 dot products
 * accumulated in order and (b) 3xTF32 with products summed exactly per
 * chunk of 64 (tensor cores: exact TF32 products, FP32-class sums) and the
 * chunks summed in FP32. The scheme is what issue 6's kernel implements;
 * this pins down that the split loses nothing the scheme needs. */
static void test_scheme_beats_fp32(void **s)
{
  (void)s;
  enum { M = 48, N = 48, K = 4096, CHUNK = 64 };
  float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
  for (int i = 0; i < M * K; i++) a[i] = (float)normal();
  for (int i = 0; i < K * N; i++) b[i] = (float)normal();
  double num32 = 0, num3 = 0, den = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double exact = 0;
      float fp32 = 0, total = 0;
      for (int c = 0; c < K; c += CHUNK) {
        float chunk = 0;
        for (int l = c; l < c + CHUNK; l++) {
          float x = a[i * K + l], y = b[l * N + j];
          exact += (double)x * y;
          fp32 += x * y;
          gs_tf32_parts px = gs_tf32_split(x), py = gs_tf32_split(y);
          chunk += (float)((double)px.big * py.big + (double)px.cross * py.small +
                           (double)px.small * py.cross);
        }
        total += chunk;
      }
      num32 += (fp32 - exact) * (fp32 - exact);
      num3 += (total - exact) * (total - exact);
      den += exact * exact;
    }
  double e32 = sqrt(num32 / den), e3 = sqrt(num3 / den);
  print_message("K=%d: FP32 in-order %.3e, 3xTF32 chunked %.3e (ratio %.2f)\n", K, e32, e3, e3 / e32);
  assert_true(e3 < 0.5 * e32);
  free(a);
  free(b);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parts_are_tf32_and_close),
    cmocka_unit_test(test_rounds_to_nearest),
    cmocka_unit_test(test_no_overflow_near_flt_max),
    cmocka_unit_test(test_non_finite_stays_out_of_cross_terms),
    cmocka_unit_test(test_tiny_values),
    cmocka_unit_test(test_scheme_beats_fp32),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
