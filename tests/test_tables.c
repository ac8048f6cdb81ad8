/* The real kernel table (dispatch/variants.c) and routing policy
 * (dispatch/routes.c), checked as data: every kernel has one route and
 * every route a kernel of the table; the fields make sense; each win box
 * holds calls of its kernel's class; and over a grid of calls, whatever the
 * table says a kernel accepts, the kernel's own launcher accepts too (the
 * launcher's supports(), linked from the library's kernel objects; no GPU
 * is touched). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cublas_api.h>
#include <library_types.h>

#include "../dispatch/routes.h"
#include "../dispatch/variants.h"
#include "../kernels/gemm_bf16_wgmma_persistent.h"
#include "../kernels/gemm_f32_3xtf32.h"
#include "../kernels/sgemm_simt.h"

typedef int (*supports_fn)(int64_t, int64_t, int64_t, int, int, const void *, int64_t,
                           const void *, int64_t, const void *, int64_t, int);

/* Each kernel's launcher check, by table name. */
static supports_fn launcher_check(const char *name)
{
  if (!strcmp(name, "sgemm_simt")) return gs_sgemm_simt_supports;
  if (!strcmp(name, "gemm_bf16_wgmma_persistent")) return gs_gemm_bf16_wgmma_persistent_supports;
  if (!strcmp(name, "gemm_f32_3xtf32")) return gs_gemm_f32_3xtf32_supports;
  return NULL;
}

static void test_every_kernel_has_one_route(void **s)
{
  (void)s;
  assert_true(gs_n_variants > 0);
  for (size_t i = 0; i < gs_n_variants; i++) {
    int routes = 0;
    for (size_t r = 0; r < gs_n_routes; r++) routes += gs_routes[r].kernel == gs_variants[i];
    assert_int_equal(routes, 1);
    assert_ptr_equal(gs_variant_named(gs_variants[i]->name), gs_variants[i]);
    for (size_t j = 0; j < i; j++) assert_string_not_equal(gs_variants[i]->name, gs_variants[j]->name);
  }
  for (size_t r = 0; r < gs_n_routes; r++) {
    int in_table = 0;
    for (size_t i = 0; i < gs_n_variants; i++) in_table += gs_routes[r].kernel == gs_variants[i];
    assert_int_equal(in_table, 1);
  }
  assert_null(gs_variant_named("no_such_kernel"));
}

static void test_fields_make_sense(void **s)
{
  (void)s;
  for (size_t i = 0; i < gs_n_variants; i++) {
    const gs_variant *v = gs_variants[i];
    print_message("%s\n", v->name);
    assert_non_null(launcher_check(v->name));   /* this test knows it */
    assert_non_null(v->launch);
    assert_non_null(v->types_ok);
    assert_non_null(v->math_ok);
    assert_true(v->data_type == CUDA_R_32F || v->data_type == CUDA_R_16BF);
    assert_int_equal(v->elem_bytes, v->data_type == CUDA_R_32F ? 4 : 2);
    assert_true(v->align_bytes >= v->elem_bytes && v->align_bytes % v->elem_bytes == 0);
    assert_true(v->m_mult > 0 && v->n_mult > 0 && v->k_mult > 0);
    assert_true(v->layouts != 0 && (v->layouts & ~GS_LAYOUT_ALL) == 0);
    assert_true(v->epilogues & GS_EPI_NONE);
    assert_true(v->selfcheck_tol > 0 && v->selfcheck_tol < 0.1);
    assert_true(v->err_vs_cublas >= 1.0 && v->err_floor >= 0);
    assert_true(v->cc_major >= 7);
  }
}

/* A plain, valid, aligned BLAS call of v's data type. */
static gs_gemm call_of(const gs_variant *v, int ta, int tb, int64_t m, int64_t n, int64_t k,
                       int64_t pad, uintptr_t a_off)
{
  static float one = 1.0f;
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.entry_name = "test";
  g.a_type = g.b_type = g.c_type = g.d_type = v->data_type;
  g.compute_type = v->data_type == CUDA_R_32F ? GS_NONE : CUBLAS_COMPUTE_32F;
  g.scale_type = CUDA_R_32F;
  g.trans_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.trans_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.algo = GS_NONE;
  g.epilogue = GS_NONE;
  g.m = m; g.n = n; g.k = k; g.batch = 1;
  g.lda = (ta ? k : m) + pad;
  g.ldb = (tb ? n : k) + pad;
  g.ldc = g.ldd = m + pad;
  g.A = (const void *)(uintptr_t)(0x10000000 + a_off);
  g.B = (const void *)(uintptr_t)0x20000000;
  g.C = (const void *)(uintptr_t)0x30000000;
  g.D = (void *)(uintptr_t)0x30000000;
  g.alpha = g.beta = &one;
  return g;
}

static void test_each_type_is_accepted_by_its_kernel(void **s)
{
  (void)s;
  for (size_t i = 0; i < gs_n_variants; i++) {
    const gs_variant *v = gs_variants[i];
    gs_gemm g = call_of(v, 1, 0, 4 * v->m_mult, 4 * v->n_mult, 4 * v->k_mult, 0, 0);
    print_message("%s\n", v->name);
    /* the opt-in FP32 kernel takes FP32 with compute type 32F (cuBLASLt's
     * way) as every FP32 kernel does */
    if (v->data_type == CUDA_R_32F) g.compute_type = CUBLAS_COMPUTE_32F;
    assert_int_equal(gs_variant_fits_args(v, &g), GS_R_ROUTED);
    assert_int_equal(gs_variant_fits_state(v, &g), GS_R_ROUTED);
  }
}

static void test_wins_lie_in_the_class(void **s)
{
  (void)s;
  for (size_t r = 0; r < gs_n_routes; r++) {
    const gs_variant *v = gs_routes[r].kernel;
    for (size_t w = 0; w < gs_routes[r].n_wins; w++) {
      const gs_win_rule *b = &gs_routes[r].wins[w];
      print_message("%s box %zu\n", v->name, w);
      assert_true(b->layouts != 0 && (b->layouts & ~v->layouts) == 0);
      assert_true(b->m_min >= 1 && b->m_min <= b->m_max);
      assert_true(b->n_min >= 1 && b->n_min <= b->n_max);
      assert_true(b->k_min >= 1 && b->k_min <= b->k_max);
      /* some call of the class lies in the box */
      int64_t m = (b->m_min + v->m_mult - 1) / v->m_mult * v->m_mult;
      int64_t n = (b->n_min + v->n_mult - 1) / v->n_mult * v->n_mult;
      int64_t k = (b->k_min + v->k_mult - 1) / v->k_mult * v->k_mult;
      assert_true(m <= b->m_max && n <= b->n_max && k <= b->k_max);
    }
  }
}

/* Whatever the table accepts, the launcher does: over layouts, sizes at and
 * off the multiples, padded leading dimensions and a misaligned A. */
static void test_table_never_accepts_what_the_launcher_refuses(void **s)
{
  (void)s;
  const int64_t deltas[] = { 0, 1, 8, -8 };
  const int64_t pads[] = { 0, 1, 4, 8, 12 };
  const uintptr_t offs[] = { 0, 4, 8, 16 };
  for (size_t i = 0; i < gs_n_variants; i++) {
    const gs_variant *v = gs_variants[i];
    supports_fn supports = launcher_check(v->name);
    long accepted = 0;
    for (int lay = 0; lay < 4; lay++)
      for (size_t dm = 0; dm < 4; dm++)
        for (size_t dk = 0; dk < 4; dk++)
          for (size_t p = 0; p < 5; p++)
            for (size_t o = 0; o < 4; o++) {
              int ta = lay & 1, tb = lay >> 1;
              gs_gemm g = call_of(v, ta, tb, 2 * v->m_mult + deltas[dm], 3 * v->n_mult,
                                  2 * v->k_mult + deltas[dk], pads[p], offs[o]);
              if (gs_variant_fits_args(v, &g) != GS_R_ROUTED ||
                  gs_variant_fits_state(v, &g) != GS_R_ROUTED)
                continue;
              accepted++;
              if (!supports(g.m, g.n, g.k, ta, tb, g.A, g.lda, g.B, g.ldb, g.C, g.ldc, 1))
                fail_msg("%s: the table accepts %s%s %lldx%lldx%lld lda %lld ldb %lld ldc %lld, A "
                         "at +%zu, which its launcher refuses",
                         v->name, ta ? "T" : "N", tb ? "T" : "N", (long long)g.m, (long long)g.n,
                         (long long)g.k, (long long)g.lda, (long long)g.ldb, (long long)g.ldc,
                         (size_t)offs[o]);
            }
    print_message("%s: %ld calls the table accepts, all accepted by the launcher\n", v->name,
                  accepted);
    assert_true(accepted > 0);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_kernel_has_one_route),
    cmocka_unit_test(test_fields_make_sense),
    cmocka_unit_test(test_each_type_is_accepted_by_its_kernel),
    cmocka_unit_test(test_wins_lie_in_the_class),
    cmocka_unit_test(test_table_never_accepts_what_the_launcher_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
