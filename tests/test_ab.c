/* A/B mode's CPU-side rules: sampling, the scratch a comparison needs,
 * the self-check verdict, and the CSV row. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cublasLt.h>
#include <cublas_api.h>

#include "../dispatch/ab.h"
#include "../kernels/compare.h"

static void test_sampling(void **s)
{
  (void)s;
  for (unsigned long i = 0; i < 10; i++) assert_false(gs_ab_sampled(0, i));  /* off */
  for (unsigned long i = 0; i < 10; i++) assert_true(gs_ab_sampled(1, i));   /* every call */
  int n = 0;
  for (unsigned long i = 0; i < 1000; i++) n += gs_ab_sampled(10, i);
  assert_int_equal(n, 100);                                                 /* one in ten */
  assert_true(gs_ab_sampled(10, 0));
  assert_false(gs_ab_sampled(10, 1));
}

static gs_gemm call(int lt, int out_type, int64_t m, int64_t ldd, int64_t n)
{
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.is_lt = lt;
  g.c_type = g.d_type = out_type;
  g.ldc = g.ldd = ldd;
  g.m = m;
  g.n = n;
  return g;
}

/* The scratch of a comparison holds a copy of the m x n output, sized to
 * what is compared: a row block of a taller matrix (ld much larger than m)
 * needs m x n, not ld x n, and the copy never reads past the last column's
 * m-th row. */
static void test_scratch_layout(void **s)
{
  (void)s;
  gs_scratch_layout l;
  gs_gemm g = call(0, CUDA_R_32F, 4096, 4096, 2048);
  assert_int_equal(gs_scratch_layout_of(&g, 10560, 0, &l), 0);
  assert_int_equal(l.ld, 4096);
  assert_int_equal(l.out, 0);
  assert_int_equal(l.partials, (size_t)4096 * 2048 * 4);
  assert_int_equal(l.result % 256, 0);
  assert_true(l.result >= l.partials + 10560);
  assert_int_equal(l.total, l.result + sizeof(gs_compare_result));

  g = call(0, CUDA_R_32F, 1000, 65536, 10);   /* a row block: compact */
  assert_int_equal(gs_scratch_layout_of(&g, 0, 0, &l), 0);
  assert_int_equal(l.ld, 1000);                /* 1000 floats are 16-byte multiples */
  assert_true(l.partials >= (size_t)1000 * 10 * 4 && l.partials < (size_t)1000 * 10 * 4 + 256);

  g = call(1, CUDA_R_16BF, 100, 100, 3);       /* ld rounded to 8 bf16 = 16 bytes */
  assert_int_equal(gs_scratch_layout_of(&g, 0, 0, &l), 0);
  assert_int_equal(l.ld, 104);
  assert_int_equal(l.partials % 256, 0);
  assert_true(l.partials >= (size_t)(104 * 2 + 100) * 2);

  /* cuBLASLt writing the copy keeps the caller's layout: its ld, and the
   * exact span of an m x n matrix with it */
  g = call(1, CUDA_R_32F, 1000, 65536, 10);
  assert_int_equal(gs_scratch_layout_of(&g, 0, 1, &l), 0);
  assert_int_equal(l.ld, 65536);
  assert_true(l.partials >= (size_t)(65536 * 9 + 1000) * 4 &&
              l.partials < (size_t)(65536 * 9 + 1000) * 4 + 256);
  g = call(0, CUDA_R_32F, 1000, 65536, 10);    /* a BLAS call takes any ldc */
  assert_int_equal(gs_scratch_layout_of(&g, 0, 1, &l), 0);
  assert_int_equal(l.ld, 1000);

  g = call(1, CUDA_R_16F, 100, 100, 3);        /* FP16 as BF16: 8 per 16 bytes */
  assert_int_equal(gs_scratch_layout_of(&g, 0, 0, &l), 0);
  assert_int_equal(l.ld, 104);

  g = call(0, CUDA_R_64F, 64, 64, 64);         /* no comparison for this output type */
  assert_int_equal(gs_scratch_layout_of(&g, 0, 0, &l), -1);
}

/* A batch is compared as one matrix only where its items' outputs lie one
 * after the other: the copy then spans all of them, and nothing between. */
static void test_a_packed_batch(void **s)
{
  (void)s;
  gs_gemm g = call(0, CUDA_R_16BF, 100, 104, 30);
  g.batch = 1;
  assert_int_equal(gs_output_cols(&g), 30);
  g.batch = 5;
  g.stride_c = g.stride_d = 104 * 30;
  assert_true(gs_batch_packed(&g));
  assert_int_equal(gs_output_cols(&g), 150);
  gs_scratch_layout l;
  assert_int_equal(gs_scratch_layout_of(&g, 0, 0, &l), 0);
  assert_int_equal(l.ld, 104);
  assert_true(l.partials >= (size_t)(104 * 149 + 100) * 2 &&
              l.partials < (size_t)(104 * 149 + 100) * 2 + 256);
  g.stride_c = g.stride_d = 104 * 30 + 8;   /* a gap between items */
  assert_false(gs_batch_packed(&g));
  g.stride_c = g.stride_d = 0;              /* every item into one output */
  assert_false(gs_batch_packed(&g));
  assert_int_equal(gs_scratch_layout_of(&g, 0, 0, &l), -1);   /* and so no comparison */
  /* cuBLASLt: C's and D's strides both, each by its own ld */
  g.is_lt = 1;
  g.ldd = 112;
  g.stride_c = 104 * 30;
  g.stride_d = 104 * 30;
  assert_false(gs_batch_packed(&g));
  g.stride_d = 112 * 30;
  assert_true(gs_batch_packed(&g));
  g.stride_c = 112 * 30;
  assert_false(gs_batch_packed(&g));
  g.stride_c = 104 * 30;
  g.batch = 0;
  assert_false(gs_batch_packed(&g));
  /* sizes whose products overflow are no layout, whatever the strides
   * (the wrapped products among them) */
  g.is_lt = 0;
  g.ldd = 104;
  g.batch = 2;
  g.n = INT64_MAX / 2;
  g.stride_c = g.stride_d = (int64_t)((uint64_t)104 * (uint64_t)g.n);
  assert_false(gs_batch_packed(&g));
  g.n = 30;
  g.batch = INT64_MAX / 16;                 /* n x batch overflows, ld x n does not */
  g.stride_c = g.stride_d = 104 * 30;
  assert_false(gs_batch_packed(&g));
}

static void test_scratch_bound(void **s)
{
  (void)s;
  assert_true(gs_ab_fits((size_t)1 << 20, 1));            /* exactly the bound */
  assert_false(gs_ab_fits(((size_t)1 << 20) + 1, 1));
  assert_true(gs_ab_fits((size_t)4096 * 4096 * 4, 64));   /* 4096^2 f32 = 64 MiB */
  assert_false(gs_ab_fits((size_t)8192 * 8192 * 4, 64));
  assert_false(gs_ab_fits(0, 64));                        /* nothing comparable */
}

/* A comparison whose relative Frobenius difference is rel (ref_sq 1),
 * with `bad` non-finite mismatches, `where_ref` of them where cuBLAS's
 * output is the non-finite one. */
static gs_compare_result cmp(double rel, double bad, double where_ref)
{
  gs_compare_result c = { 0, 0, rel * rel, 1, bad, where_ref, 0 };
  return c;
}

/* The same, the operands scanned: `inputs` of their elements Inf or NaN
 * (-1: not scanned). */
static gs_compare_result cmp_in(double rel, double bad, double where_ref, double inputs)
{
  gs_compare_result c = cmp(rel, bad, where_ref);
  c.inputs_nonfinite = inputs;
  return c;
}

static void test_selfcheck_verdict(void **s)
{
  (void)s;
  const struct { gs_compare_result c; int fp64; gs_selfcheck_verdict want; } cases[] = {
    { cmp(1e-6, 0, 0), 0, GS_SELFCHECK_PASSES },
    { cmp(1e-5, 0, 0), 0, GS_SELFCHECK_PASSES },
    { cmp(2e-5, 0, 0), 0, GS_SELFCHECK_FAILS },
    { cmp(0, 1, 0), 0, GS_SELFCHECK_FAILS },        /* a NaN where cuBLAS has a number */
    { cmp(0, 1, 0), 1, GS_SELFCHECK_FAILS },        /* that, for an FP64-kinds kernel too */
    { cmp(NAN, 0, 0), 0, GS_SELFCHECK_FAILS },
    { cmp(INFINITY, 0, 0), 1, GS_SELFCHECK_FAILS },
    /* cuBLAS's own sums overflowed: strict kernels fail, FP64-kinds ones
     * cannot be judged, unless their finite outputs disagree */
    { cmp(1e-6, 3, 3), 0, GS_SELFCHECK_FAILS },
    { cmp(1e-6, 3, 3), 1, GS_SELFCHECK_INCONCLUSIVE },
    { cmp(2e-5, 3, 3), 1, GS_SELFCHECK_FAILS },
    { cmp(1e-6, 3, 2), 1, GS_SELFCHECK_FAILS },     /* one mismatch of ours */
    /* Inf or NaN in the operands (or not known): no overflow to put it down to */
    { cmp_in(1e-6, 3, 3, 1), 1, GS_SELFCHECK_FAILS },
    { cmp_in(1e-6, 3, 3, -1), 1, GS_SELFCHECK_FAILS },
    { cmp_in(1e-6, 0, 0, 5), 1, GS_SELFCHECK_PASSES },   /* the kinds agree */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    print_message("case %zu\n", i);
    assert_int_equal(gs_selfcheck_judge(&cases[i].c, 1e-5, cases[i].fp64), cases[i].want);
  }
}

static void test_row_format(void **s)
{
  (void)s;
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.entry_name = "cublasSgemm_v2";
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_32F;
  g.trans_a = CUBLAS_OP_T;
  g.trans_b = CUBLAS_OP_N;
  g.m = 4096; g.n = 2048; g.k = 1024; g.batch = 1;
  char row[512];
  int len = gs_ab_format_row(row, sizeof row, 1764700000.25, 42, &g, "sgemm_simt", "use", 100.0,
                             110.0, 1e-6, 2e-3, 3.5e-7, 1);
  assert_int_equal(len, (int)strlen(row));
  assert_string_equal(row, "1764700000.250000,42,cublasSgemm_v2,f32,f32,TN,4096,2048,1024,1,"
                           "sgemm_simt,use,100.000,110.000,1.1000,1e-06,0.002,3.5e-07,1");
  /* as many fields as the header */
  int commas_row = 0, commas_header = 0;
  for (const char *p = row; *p; p++) commas_row += *p == ',';
  for (const char *p = GS_AB_HEADER; *p; p++) commas_header += *p == ',';
  assert_int_equal(commas_row, commas_header);
  /* a failed comparison says so, it does not print garbage */
  gs_ab_format_row(row, sizeof row, 0, 1, &g, "k", "use", 1, 1, INFINITY, INFINITY, NAN, 0);
  assert_non_null(strstr(row, ",inf,inf,nan,0"));
}

/* The hold before a pair: the first one fixed; then several times the
 * host's last queueing time plus a margin, so a pair queued a little
 * slower than the last is still covered; within bounds either way. */
static void test_hold(void **s)
{
  (void)s;
  assert_true(gs_ab_next_hold_us(0) == GS_AB_HOLD_FIRST_US);       /* nothing measured */
  assert_true(gs_ab_next_hold_us(-1) == GS_AB_HOLD_FIRST_US);
  assert_true(gs_ab_next_hold_us(NAN) == GS_AB_HOLD_FIRST_US);
  for (double q = 0.5; q < 2000; q *= 1.7) {
    double h = gs_ab_next_hold_us(q);
    assert_true(h >= 50.0 && h <= 5000.0);
    if (q < 1000) assert_true(h >= 3.0 * q + 40.0);   /* covers a pair 3x slower */
  }
  assert_true(gs_ab_next_hold_us(1) <= 60.0);   /* a fast host holds little */
  assert_true(gs_ab_next_hold_us(1e6) == 5000.0);
  assert_true(gs_ab_next_hold_us(INFINITY) == 5000.0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sampling),
    cmocka_unit_test(test_scratch_layout),
    cmocka_unit_test(test_a_packed_batch),
    cmocka_unit_test(test_scratch_bound),
    cmocka_unit_test(test_selfcheck_verdict),
    cmocka_unit_test(test_row_format),
    cmocka_unit_test(test_hold),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
